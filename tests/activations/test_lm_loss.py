"""A decoder's language-model loss with and without its BOS token: activations/lm_loss.py,
against the same sums computed one text at a time from the model's own logits."""

from __future__ import annotations

import pytest
import torch

from lmgeometry.activations.lm_loss import lm_loss
from lmgeometry.errors import UsageError

TEXTS = ["The bank raised its rates on Monday.", "A short one.", "Hi",
         "She sat on the river bank and watched the water go by."]


@pytest.fixture(scope="module")
def tiny_decoder(tmp_path_factory, smollm2_tokenizer) -> str:
    """A 2-layer Llama (random weights, seed 0) with SmolLM2's tokenizer, saved."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = smollm2_tokenizer
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64,
                         num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2,
                         max_position_embeddings=128, bos_token_id=tok.bos_token_id,
                         eos_token_id=tok.eos_token_id)
    folder = tmp_path_factory.mktemp("tiny-decoder")
    LlamaForCausalLM(config).save_pretrained(folder)
    tok.save_pretrained(folder)
    return str(folder)


def _by_hand(folder: str, text: str, bos: bool) -> tuple[float, int]:
    """Summed NLL of the text's tokens after its first, one unpadded forward pass."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    lm = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32).eval()
    ids = tok(text, add_special_tokens=False)["input_ids"]
    seq = ([tok.bos_token_id] if bos else []) + ids
    with torch.inference_mode():
        logp = torch.log_softmax(lm(input_ids=torch.tensor([seq])).logits[0].float(), -1)
    start = len(seq) - len(ids) + 1  # the text's second token
    return -sum(float(logp[i - 1, seq[i]]) for i in range(start, len(seq))), len(seq) - start


@pytest.mark.parametrize("bos", [False, True])
def test_the_loss_is_each_text_s_nll_after_its_first_token(tiny_decoder, bos):
    found = lm_loss(tiny_decoder, TEXTS, prepend_bos=bos, batch_size=3)
    for i, text in enumerate(TEXTS):
        nll, n = _by_hand(tiny_decoder, text, bos)
        assert found.tokens[i] == n
        assert found.nll[i] == pytest.approx(nll, rel=1e-4, abs=1e-4)
    # the batch (padded on the right) changes nothing; the mean is per target token
    alone = lm_loss(tiny_decoder, TEXTS, prepend_bos=bos, batch_size=1)
    assert alone.nll == pytest.approx(found.nll, rel=1e-4)
    assert found.mean == pytest.approx(found.nll.sum() / found.tokens.sum())


def test_a_one_token_text_has_no_target_and_no_text_has_one_is_an_error(tiny_decoder):
    found = lm_loss(tiny_decoder, ["Hi", TEXTS[0]], prepend_bos=False)
    assert found.tokens[0] == 0 and found.nll[0] == 0 and found.tokens[1] > 0
    with pytest.raises(UsageError, match="two tokens or more"):
        lm_loss(tiny_decoder, ["Hi"], prepend_bos=False)


def test_an_encoder_has_no_language_model_loss(tiny_folder):
    with pytest.raises(UsageError, match="needs a decoder"):
        lm_loss(str(tiny_folder), TEXTS, prepend_bos=False)
