"""`ctxlab tune`: the cheapest setting of the presets a scenario's `tune:` section names that meets
its constraints, searched with Optuna's seeded TPE sampler over runs of the lab's one run path
(README.md, Tuning).

Modules: `space` (the section as Optuna parameters, and each trial's scenario document),
`measure` (a run as a trial's objective, constraints and verdict; the Pareto front), `search`
(the study: batches of trials, resuming, the budget), `journal` (the study's log file, appended
unsynced), `output` (the `tune/` folder, written all at once), `command` (the command line).
"""
