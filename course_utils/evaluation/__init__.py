"""The evaluation wing: reusable measurements of any model.

- ``agreement``: Subject–verb agreement measured on any LM: P(right form) against P(wrong form), by number of attractors.
- ``linear_probe``: A linear probe: logistic regression on frozen vectors, scored by stratified k-fold cross-validation.
- ``lm_probes``: Measure any language model on the planted phenomena, beside the oracle's exact answer.
- ``translation_metrics``: Scoring translations: BLEU from scratch, exact match, token accuracy, alignment error rate.
"""
