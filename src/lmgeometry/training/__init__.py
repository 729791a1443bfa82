"""Training: models fine-tuned on a task, cached as plain transformers folders.

Why :mod:`~lmgeometry.training.finetune` has its own loop rather than transformers' ``Trainer``:
the fine-tuned folder is keyed on the digest of that module's code
(:func:`lmgeometry.sources.key_files`), so the whole recipe (AdamW groups, linear warm-up and
decay, clipping, cross-entropy) is code the key covers, while ``Trainer``'s defaults, sampler
and seeding would live in the installed transformers, which the key does not cover (the
folder's record only notes its version).
The batch order is :func:`~lmgeometry.training.finetune.batch_order`, a numpy permutation from
``default_rng([seed, epoch])`` with length-sorted pools of 50 batches, so a seed fixes the
weights on a CPU (tested) independently of ``Trainer``'s length-grouped sampler. The run is one
CPU process with no evaluation, checkpointing or mixed precision during training, the parts
``Trainer`` adds; the heads are transformers' own ``AutoModelForSequenceClassification`` heads
either way.
"""
