"""The instructor's grader: hidden tests, judged outside the student's kernel. Not part of the student release.

- ``spec``: what a hidden test is (the inputs a student's function gets, its points, how its answer is judged).
- ``hidden``: the hidden tests of every exercise, one module per notebook (instructor-only cases and seeds).
- ``export``: how an answer leaves the student's process (plain tensors, numbers and strings; nothing executable).
- ``runner``: the student's process: an IPython shell that runs the submission's cells and calls its functions.
- ``sandbox``: the command that starts the runner with no network, a read-only environment and memory caps.
- ``session``: the grader's side of a runner: cells and calls with time limits, restarts after a crash.
- ``submission``: one submitted notebook graded: the cells to run, each exercise's cases, one row each.
- ``roster``: students from LMS file names and a roster; totals, Canvas and Gradescope CSVs, feedback files.
"""
