"""What a model's config and modules say about its architecture.

Its kind (encoder or decoder), training objective, normalisation placement, tied embeddings,
head token, position scheme and usable context length. Moved from :mod:`lmgeometry.io.models`
(issue 31).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedConfig

from lmgeometry.errors import ModelLoadError

__all__ = [
    "max_positions",
    "head_token",
    "model_kind",
    "normalisation",
    "tied_embeddings",
    "training_objective",
]


def model_kind(config: PreTrainedConfig) -> str:
    """``"encoder"`` or ``"decoder"`` from a config; raises for encoder-decoder models.

    Uses ``is_encoder_decoder``, then the ``model_type`` (known families), ``is_decoder``, the
    ``architectures`` class names, and last whether transformers has a causal-LM or masked-LM
    class for the type.

    Parameters
    ----------
    config : PreTrainedConfig
        A transformers config.

    Returns
    -------
    str
    """
    from transformers.models.auto import modeling_auto as auto

    model_type = getattr(config, "model_type", "") or ""
    if getattr(config, "is_encoder_decoder", False) or (
        model_type in auto.MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES
        and model_type not in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
    ):
        raise ModelLoadError(
            f"{model_type or 'this model'} is an encoder-decoder model; lmgeometry measures "
            "encoder-only models (BERT-like) and decoder-only models (GPT-like), whose hidden "
            "states form one stack of layers. Use an encoder or decoder model instead."
        )
    if model_type in _DECODER_TYPES or getattr(config, "is_decoder", False):
        return "decoder"
    if model_type in _ENCODER_TYPES:
        return "encoder"
    architectures = getattr(config, "architectures", None) or []
    if any(a.endswith(("ForCausalLM", "LMHeadModel")) for a in architectures):
        return "decoder"
    if any(a.endswith("ForMaskedLM") for a in architectures):
        return "encoder"
    if model_type in auto.MODEL_FOR_MASKED_LM_MAPPING_NAMES:
        return "encoder"
    if model_type in auto.MODEL_FOR_CAUSAL_LM_MAPPING_NAMES:
        return "decoder"
    raise ModelLoadError(
        f"cannot tell whether model type {model_type!r} (architectures {architectures}) is an "
        "encoder or a decoder: transformers has neither a masked-LM nor a causal-LM class for it. "
        "lmgeometry supports text encoders and decoders."
    )


#: How families were pretrained (their papers); the fine-tuning of a checkpoint is not known.
_OBJECTIVES = {
    "bert": "masked LM and next-sentence prediction",
    "roberta": "masked LM", "xlm-roberta": "masked LM (multilingual)", "camembert": "masked LM",
    "distilbert": "masked LM with distillation from BERT",
    "albert": "masked LM and sentence-order prediction",
    "electra": "replaced-token detection",
    "mpnet": "masked and permuted LM",
    "modernbert": "masked LM",
}


#: Families whose blocks normalise after each sublayer (Vaswani et al. 2017, BERT), before it
#: (GPT-2 and most decoders since), or both (Gemma 2 and 3: norms before and after).
_POST_NORM = {"bert", "roberta", "xlm-roberta", "camembert", "distilbert", "albert", "electra",
              "mpnet", "ernie", "data2vec-text", "xmod", "deberta", "deberta-v2"}


_SANDWICH_NORM = {"gemma2", "gemma3", "gemma3_text"}


def training_objective(config: PreTrainedConfig, kind: str) -> str:
    """The pretraining objective of a model family, from its ``model_type`` (papers).

    Decoders are causal language models; encoders are looked up in a short table (masked LM
    and next-sentence prediction for BERT, replaced-token detection for ELECTRA, ...). What a
    particular checkpoint was fine-tuned on cannot be read from its files, so the text says so.
    """
    model_type = getattr(config, "model_type", "") or ""
    if kind == "decoder":
        return "causal LM (fine-tuning, if any, not known)"
    known = _OBJECTIVES.get(model_type)
    if known is None:
        return f"not known for model type {model_type!r} (encoder)"
    return f"{known} (fine-tuning, if any, not known)"


def normalisation(model: torch.nn.Module) -> str:
    """The normalisation layers of a model and where its blocks apply them.

    The kind of layer comes from the modules (``LayerNorm``, ``RMSNorm``); the placement from
    the family: after each sublayer (post-norm: BERT and its descendants), before it (pre-norm:
    GPT-2, Llama and most decoders, with a final norm after the last block, so the last hidden
    state is normalised), or before and after (Gemma 2 and 3). E.g. ``"LayerNorm, post-norm"``.
    """
    names = {type(m).__name__ for m in model.modules()}
    kinds = sorted({"RMSNorm" if "RMSNorm" in n else "LayerNorm" for n in names
                    if "RMSNorm" in n or "LayerNorm" in n})
    layer = " + ".join(kinds) if kinds else "no normalisation module found"
    model_type = getattr(getattr(model, "config", None), "model_type", "") or ""
    if model_type in _POST_NORM:
        return f"{layer}, post-norm"
    if model_type in _SANDWICH_NORM:
        return f"{layer}, pre- and post-norm, final norm"
    if model_type in _DECODER_TYPES or model_type == "roberta-prelayernorm":
        return f"{layer}, pre-norm, final norm"
    return f"{layer}, placement not known"


def tied_embeddings(model: torch.nn.Module) -> str:
    """Whether the output (softmax) matrix is the input embedding matrix.

    ``"yes"`` / ``"no"`` from the loaded weights (the same tensor or not) when the model has an
    output layer; an encoder loaded without its language-model head answers from its config,
    e.g. ``"yes (config; no LM head loaded)"``.
    """
    inputs = model.get_input_embeddings()
    try:
        outputs = model.get_output_embeddings()
    except (AttributeError, NotImplementedError):
        outputs = None
    if outputs is not None and getattr(outputs, "weight", None) is not None:
        same = outputs.weight.data_ptr() == inputs.weight.data_ptr()
        return "yes" if same else "no"
    config = getattr(model, "config", None)
    text = config.get_text_config() if hasattr(config, "get_text_config") else config
    tied = getattr(text, "tie_word_embeddings", None)
    if tied is None:
        return "not known (no LM head loaded)"
    return f"{'yes' if tied else 'no'} (config; no LM head loaded)"


def head_token(kind: str) -> str:
    """Which token a transformers sequence-classification head reads, by model kind.

    ``"first"`` for an encoder (``[CLS]`` for BERT, through its pooler; ``<s>`` for MPNet and
    RoBERTa) and ``"last"`` for a decoder (the last token that is not padding:
    ``GPT2ForSequenceClassification``, ``LlamaForSequenceClassification`` and the other
    ``*ForSequenceClassification`` decoders, which read the final hidden state there). Seed 003
    reads the same positions (GPT-2's last token, BERT's ``[CLS]``).
    """
    if kind not in ("encoder", "decoder"):
        raise ValueError(f"kind must be 'encoder' or 'decoder', not {kind!r}")
    return "first" if kind == "encoder" else "last"


_DECODER_TYPES = {
    "gpt2", "gpt_neo", "gpt_neox", "gptj", "gpt_bigcode", "llama", "gemma", "gemma2",
    "gemma3_text", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "phi",
    "phi3", "opt", "bloom", "falcon", "olmo", "olmo2", "stablelm", "starcoder2", "codegen",
    "granite", "smollm3", "ctrl", "xglm", "mpt",
}


_ENCODER_TYPES = {
    "bert", "roberta", "xlm-roberta", "mpnet", "distilbert", "electra", "albert", "deberta",
    "deberta-v2", "camembert", "modernbert", "ernie", "roformer", "megatron-bert", "funnel",
    "xlm", "flaubert", "nomic_bert", "data2vec-text", "roberta-prelayernorm", "xmod",
}


def _position_scheme(config: PreTrainedConfig, model: torch.nn.Module) -> str:
    """Describe how positions enter the model, from its config and modules."""
    import torch

    if getattr(config, "sinusoidal_pos_embds", False):
        parts = ["sinusoidal absolute"]
    else:
        parts = []
    names = [name for name, _ in model.named_modules()]
    learned = any(
        isinstance(module, torch.nn.Embedding)
        and name.rsplit(".", 1)[-1] in {"position_embeddings", "wpe", "embed_positions",
                                         "position_embedding"}
        for name, module in model.named_modules()
    )
    if learned and not parts:
        parts.append("learned absolute")
    if any("rotary" in n.rsplit(".", 1)[-1] for n in names):
        parts.append("rotary")
    if any(n.endswith("relative_attention_bias") for n in names):
        parts.append("relative bias")
    if str(getattr(config, "position_embedding_type", "")).startswith("relative"):
        parts.append("relative")
    if getattr(config, "alibi", False) or getattr(config, "model_type", "") == "bloom":
        parts.append("ALiBi")
    return " + ".join(parts) if parts else "none found"


def max_positions(config: PreTrainedConfig, model: torch.nn.Module, tokenizer: Any) -> int:
    """Longest input in tokens that the model's position scheme covers."""
    value = getattr(config, "max_position_embeddings", None)
    base = getattr(model, "base_model", model)
    embeddings = getattr(base, "embeddings", None)
    padding_idx = getattr(embeddings, "padding_idx", None)
    if value is not None and padding_idx is not None and hasattr(embeddings, "position_embeddings"):
        value -= padding_idx + 1  # RoBERTa-style positions start after the padding index
    if value is None:
        limit = getattr(tokenizer, "model_max_length", None)
        value = limit if limit is not None and limit < 1_000_000 else 0
    return int(value)
