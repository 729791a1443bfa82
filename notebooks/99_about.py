# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # About this build
#
# What produced the pages of this book: the project's commit, each chapter's parameters,
# running time, peak memory and the sha256 of its results file, the models (with the
# fingerprint of their files) and the store entries each chapter read, the data files and
# their licences, the library versions and the machine. Everything here is read from the
# records the book pipeline writes next to each executed chapter (`NN_name.exec.json`,
# `NN_name.run.json`); none of it is typed by hand.

# %% tags=["parameters"]
results_path: str = "99_about.results.json"  # relative to the working dir (--cwd)

# %% tags=["remove-input"]
from pathlib import Path

import pandas as pd
from IPython.display import Markdown, display

from lmgeometry.chapters.common import checked_parameters
from lmgeometry.report import about, results
from lmgeometry.report.figures import show_table
from lmgeometry.report.prose import plural

globals().update(checked_parameters(globals()))

folder = Path(results_path).resolve().parent
chapters = about.book_chapters(folder, exclude=[Path(results_path).name.split(".")[0]])
introduction = folder / "00_introduction.results.json"
model_facts = results.load_results(introduction)["models"] if introduction.is_file() else []
facts = about.build_facts(folder, chapters, model_facts)
ran = facts["chapters"]["seconds"].dropna()
display(Markdown(
    f"The chapters were last executed {about.source_sentence(facts['project'])} (the book's "
    f"own outputs in `book/` and `_build/` do not count as changes). Together they ran for "
    f"{about.duration(ran.sum())} ({plural(len(ran), 'chapter')} with a run record), on "
    f"{plural(len(facts['machines']), 'machine')} and "
    f"{plural(len(facts['environment']), 'set')} of library versions."
))

# %% [markdown]
# ## How to rebuild exactly this book
#
# Check out the commit above, install with the README's two commands (`make venv`, which
# installs the pinned `requirements.txt`), point `LMGEOMETRY_DATA_MIRROR` at a mirror of the
# data files below (or let the package download them: each is checked against its sha256),
# and run `make book`. A chapter whose execution record still matches (same source,
# parameters, package files, library versions, model fingerprints, store entries and input
# files) is not executed again; `lmgeometry book --force` executes every chapter. The results
# files' sha256 below tell you whether your numbers are the same bytes as these. A book built
# with `lmgeometry book` (or published with `lmgeometry publish`) ends every page with a
# *Download this build* link to an archive of its HTML, executed notebooks, results files,
# execution manifests and run records; a page without that link was built without one.

# %% [markdown]
# ## Chapters

# %% tags=["remove-input"]
table = about.shown(facts["chapters"],
                    hashes=["results sha256", "notebook sha256", "source sha256"])
show_table(table, "Each chapter's last execution: the parameters the book passed (beyond "
                  "the chapter's defaults), wall time, the kernel's peak resident memory, "
                  "when it ran, the sha256 of its results file, executed notebook and source "
                  "(the first 12 hex digits; hover for all 64), and how many "
                  "activation-store entries it read.",
           row_ids=[about.chapter_anchor(name) for name in table["chapter"]])

# %% [markdown]
# ## Models
#
# A model's fingerprint is a sha256 over its resolved configuration, weight and tokenizer
# files: two runs with the same fingerprint used the same model bytes.

# %% tags=["remove-input"]
show_table(about.shown(facts["models"], hashes=["fingerprint"]),
           "The models the chapters used: the spec as the chapter named it, the checkpoint "
           "it resolved to, its kind, the fingerprint of its files (hover for all of it), the "
           "chapters (by number) and its caveats (columns no model has are left out).",
           fold_rows=20)

# %% [markdown]
# ## Activation-store entries

# %% tags=["remove-input"]
show_table(about.shown(facts["stores"], hashes=["corpus digest", "model fingerprint"]),
           "The activation-store entries each chapter read: the entry's name (corpus and "
           "key), the model, the corpus and its digest, and the model's fingerprint (hover "
           "for the full digests).")

# %% [markdown]
# ## Data files
#
# The package's data manifest pins every data file the chapters can read, with its sha256;
# each file is checked against it whenever it is read, and a mismatch stops the run.

# %% tags=["remove-input"]
show_table(about.shown(facts["data"], hashes=["sha256"]),
           "The data files, their sha256 (hover for all of it), size in bytes, licence and "
           "origin.")

# %% [markdown]
# ## Libraries and machine

# %% tags=["remove-input"]
if facts["environment"]:
    versions = pd.DataFrame(facts["environment"]).T
    versions.columns = [f"set {i + 1}" for i in range(versions.shape[1])]
    show_table(versions.reset_index(names="library"),
               "The versions of Python and of the libraries that compute or draw the numbers, "
               "as the chapters' execution records hold them (one column per distinct set).")
else:
    display(Markdown("No chapter of this book folder has an execution record yet."))
if facts["machines"]:
    show_table(pd.DataFrame(facts["machines"]),
               "The machines the chapters ran on: operating system, CPU, cores, memory (GiB) "
               "and accelerator.")
else:
    display(Markdown("No chapter has a run record yet (they are written when `lmgeometry "
                     "book` executes a chapter), so the machine is not known."))

# %% tags=["remove-cell"]
results.save_results(results_path, facts)

# %% [markdown]
# ## References
#
# The works the chapters cite, and the methods and data sets the package implements and reads.
#
# ```{bibliography}
# :all:
# ```
