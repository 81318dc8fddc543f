# %% [markdown]
# # Exploring a provbench run in Python
#
# A notebook in the percent format (open it in Jupyter with jupytext, VS Code or Spyder, or run it
# as a script: `python explore_run.py RUN_DIR`). It needs pandas: `pip install 'provbench[analysis]'`.
# `tests/test_export.py` runs it on a toy run.

# %%
import sys

import provbench

run_dir = sys.argv[1] if len(sys.argv) > 1 else "reports/quickstart"
run = provbench.load_run(run_dir)
print(run.manifest.suite_name, run.manifest.models.get("llm"), len(run.records), "records")

# %% [markdown]
# Typed records: each `RunRecord` holds its unit key, status, scores and the whole trace.

# %%
first = run.records[0]
print(first.key.system, first.key.condition, first.status, first.trace.answer if first.trace else None)
print("visited:", first.trace.visited_entities if first.trace else [])

# %% [markdown]
# One row per unit as a pandas DataFrame: the rows `provbench export` writes.

# %%
frame = run.dataframe()
print(frame[["question_id", "system", "condition", "status", "answer"]].head())

# %% [markdown]
# Baseline accuracy per system, and how often each intervention changed the answer.

# %%
baseline = frame[frame["condition"] == "baseline"]
print(baseline.groupby("system")["score.accuracy"].mean().round(3))
interventions = frame[frame["condition"] != "baseline"]
if "score.output_changed" in interventions:
    print(
        interventions.pivot_table(
            index="condition", columns="system", values="score.output_changed", aggfunc="mean"
        ).round(3)
    )
