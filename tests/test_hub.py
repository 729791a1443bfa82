"""The hub branch of ``load_model`` with only the download stubbed.

``load_model("gpt2")`` and ``load_model("bert-base-cased")`` run the hub path unchanged --
the spec check, the online config, tokenizer and weight downloads of transformers and
huggingface_hub, the hub cache, the fingerprint of the downloaded snapshot -- against a local
file server (``tests/fixtures/hub_server.py``) that serves, under those ids, GPT-2- and
BERT-shaped models built here with the real tokenizers (random weights). Then the same ids
load again with the hub offline, from the cache alone. Subprocesses: huggingface_hub reads
``HF_ENDPOINT``, ``HF_HOME`` and ``HF_HUB_OFFLINE`` when it is imported.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures.seed_models import bert_folder, gpt2_folder

# GPT-2's tokenizer files come from the data mirror; two interpreters load four models (slow)
pytestmark = [pytest.mark.data, pytest.mark.slow]

TESTS = Path(__file__).resolve().parent

LOAD = """
import json, os, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
repos = {repos!r}
if repos:
    from fixtures.hub_server import serve
    server, log = serve({{repo: Path(folder) for repo, folder in repos.items()}})
    os.environ["HF_ENDPOINT"] = f"http://127.0.0.1:{{server.server_address[1]}}"
from lmgeometry.io import models
out = {{}}
for spec in ("gpt2", "bert-base-cased"):
    models.check_spec(spec)
    loaded = models.load_model(spec, device="cpu")
    out[spec] = {{"facts": loaded.facts(), "resolved": models.resolve_fingerprint(spec),
                  "hello": loaded.tokenizer("Hello world")["input_ids"]}}
out["requests"] = log if repos else []
print(json.dumps(out))
"""


def _run(code: str, env: dict[str, str]) -> dict:
    full = {**os.environ, **env}
    full.pop("TRANSFORMERS_OFFLINE", None)
    run = subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-4000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hub-repos")
    return {"gpt2": gpt2_folder(root / "gpt2"), "bert-base-cased": bert_folder(root / "bert")}


def test_hub_ids_download_then_load_offline(folders, tmp_path):
    from lmgeometry.io.models import load_model

    repos = {repo: str(folder) for repo, folder in folders.items()}
    home = {"HF_HOME": str(tmp_path / "hf")}
    online = _run(LOAD.format(tests=str(TESTS), repos=repos), {**home, "HF_HUB_OFFLINE": "0"})
    fetched = {path for method, path in online["requests"] if method == "GET"}
    for repo in repos:  # the weights came through the download, at the served commit
        assert any(p.startswith(f"/{repo}/resolve/") and p.endswith("/model.safetensors")
                   for p in fetched), sorted(fetched)
    gpt2, bert = online["gpt2"]["facts"], online["bert-base-cased"]["facts"]
    assert (gpt2["spec"], gpt2["name"], gpt2["kind"]) == ("gpt2", "gpt2", "decoder")
    assert (gpt2["architecture"], gpt2["position_scheme"]) == ("GPT2LMHeadModel",
                                                               "learned absolute")
    assert gpt2["vocab_size"] == 50_257 and online["gpt2"]["hello"] == [15496, 995]
    assert gpt2["objective"] == "causal LM (fine-tuning, if any, not known)"
    assert (bert["kind"], bert["architecture"], bert["prepends_bos"]) == ("encoder",
                                                                          "BertModel", False)
    assert bert["special_tokens"]["cls_token"] == "[CLS]"
    for repo, folder in folders.items():  # the snapshot holds the served files, byte for byte
        fingerprint = load_model(str(folder), device="cpu").fingerprint
        assert online[repo]["facts"]["fingerprint"] == online[repo]["resolved"] == fingerprint

    offline = _run(LOAD.format(tests=str(TESTS), repos={}), {**home, "HF_HUB_OFFLINE": "1"})
    for repo in repos:
        assert offline[repo]["facts"]["fingerprint"] == online[repo]["facts"]["fingerprint"]
        assert offline[repo]["hello"] == online[repo]["hello"]
