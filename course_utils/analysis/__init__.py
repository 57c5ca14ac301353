"""The analysis wing: one module per notebook's claim set, measured on the trained models. Notebooks, benchmarks and
widgets import it; the models never do.

- ``attention_cost``: Vaswani et al.'s Table 1, counted and timed: a self-attention layer against an LSTM layer, and training throughput.
- ``bert_choices``: Notebook 09's BERT choices measured against the oracle: the WordPiece vocabulary's size, the masking rate, fresh sentences.
- ``block_ablation``: The transformer block's building blocks, measured: residual connections, LayerNorm and where it goes, warm-up.
- ``bert_sizes``: BERT-base and BERT-large parameter counts, built on the meta device, per group, against a closed form.
- ``contextual_embeddings``: A word's vector at every BERT layer, Devlin et al.'s six layer choices, and linear probes and nearest neighbours that measure which layers tell word senses apart.
- ``data_or_model``: More data or a bigger model? Notebook 08's GPT trained four ways, judged on the test split against the oracle.
- ``generation_analysis``: Generated text judged by the oracle: grammaticality, per-token perplexity against the entropy rate, distinct-n, repetition, length; the beam search curse.
- ``generation_timing``: Generation timed: our greedy and beam search against ``generate()``, and the KV cache's time per token.
- ``lm_seeds``: Seed spreads of notebooks 04–06's headline comparisons, each model retrained by its zoo recipe with other seeds, stored beside the checkpoints.
- ``lstm_analysis``: What recurrent states carry, measured: an LSTM's gates, a unit that stores the subject's number, both sides.
- ``rnn_analysis``: Measuring what the lectures claim about recurrent networks: vanishing and exploding gradients, clipping, speed.
- ``scaling_counting``: Two ways to count a model's size and cost, and the compute-optimal model under each (notebook 11, issue 44).
- ``scaling_fits``: Scaling laws fitted from scratch: Chinchilla's three approaches, Kaplan's form, and bootstrap intervals.
- ``scaling_flops``: The real training FLOPs of the scaling runs: every matmul of every step, forward and backward.
- ``scaling_laws``: The scaling laws of the course language: each approach fitted to the stored runs and judged against the true floor.
- ``scaling_runs``: Scaling laws against a known floor: a grid of GPT runs on fresh sentences, each scored against the oracle.
- ``scaling_sensitivity``: How far analysis and training choices move approach 3's E and a, against the seed spread (notebook 11, issue 44).
- ``scaling_verdicts``: Each scaling-law approach judged against the truth the course language knows (notebook 11).
- ``seed_runs``: Runs of one recipe over several seeds, stored and read back: run names, spreads and verdicts, tables, the command line.
- ``seed_spread``: The course's noise rule: a comparison between two trainings stands only where its gap exceeds their spread over seeds.
- ``stored_runs``: Results of runs too long for a notebook, stored as a small JSON file beside the checkpoints.
- ``transformer_seeds``: Notebook 08's headline comparisons over three seeds: the block ablation, dropout on 1,000 sentences, the three kinds of positions.
- ``translation_analysis``: Measuring the seq2seq lecture's claims: quality by length, alignment error, the passive, the bottleneck, cost.
- ``translation_seeds``: Notebook 07's headline comparisons over three seeds: the four translators at hidden size 128 and the bottleneck sweep.
"""
