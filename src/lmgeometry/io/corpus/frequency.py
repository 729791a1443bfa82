"""The reference texts whose token counts rank a vocabulary by frequency (seed 004:
:func:`frequency_texts`).
"""

from __future__ import annotations

from lmgeometry.io import datasets, lexical

__all__ = [
    "frequency_texts",
]


def frequency_texts(brown_chunk: int = 200) -> list[str]:
    """The reference corpus for token frequencies: Brown, MultiNLI (dev) and STS 2012-2016.

    Biš et al. (2021) rank tokens by their frequency in CNN/DailyMail (appendix B) or, for BERT,
    by vocabulary index (Fig. 3). CNN/DailyMail is not in this project's data, so the chapter
    counts tokens in the texts it does have: the Brown corpus (1.16M words, as
    ``lexical.brown_words``, joined with single spaces in chunks of ``brown_chunk`` words, so
    punctuation is separated from words by a space), the premises and hypotheses of MultiNLI
    dev-matched, and both sentences of every STS 2012-2016 pair.

    Parameters
    ----------
    brown_chunk : int
        Brown words per text.

    Returns
    -------
    list of str
    """
    brown = lexical.brown_words()
    texts = [" ".join(brown[i : i + brown_chunk]) for i in range(0, len(brown), brown_chunk)]
    mnli = datasets.load_mnli()
    texts += mnli["premise"].tolist() + mnli["hypothesis"].tolist()
    sts = datasets.load_sts()
    texts += sts["sentence1"].tolist() + sts["sentence2"].tolist()
    return texts
