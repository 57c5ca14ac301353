"""The widgets wing: the demos an instructor projects, and the drawing kit they share.
It may import the models, the language and the core; nothing outside it imports a widget.

- ``activation_demo``: Widget: pick an activation and a depth; see g(z), g'(z) and the gradient each layer of a deep net gets.
- ``agreement_demo``: Widget: does the verb agree with its subject, across attractors? Asked of each model.
- ``attention_demo``: Widget: where each head of the course GPT looks in a sentence, by layer and head, the causal mask on or off.
- ``backdrop``: Static backdrops for fast widgets: what never changes is drawn once, as a bitmap.
- ``backprop_demo``: Widget: step through the forward pass, then the backward pass, of L = c(a + 2b) on its graph.
- ``beam_demo``: Widget: beam search drawn step by step, pruned branches dashed, with the width and the length normalisation to change.
- ``beam_tree``: The beam search tree: the nodes a traced search drew, where each goes, and the Pillow painter of the picture.
- ``bertviz_offline``: bertviz's head and model views with no network (d3 and jQuery from installed packages), and a static picture.
- ``contextual_demo``: Widget: an ambiguous word's BERT vectors at a chosen layer in 2-D, coloured by sense, with the sense probe's accuracy by layer.
- ``descent_demo``: Widget: gradient descent (plain, momentum, Adam) on the 2-D loss surface of a linear regression.
- ``embedding_demo``: Widget: a model's word embeddings in 2-D (PCA), coloured by word class; pick a word, see its neighbours.
- ``fill_mask_demo``: Widget: a sentence with one [MASK]; BERT's guesses for the gap beside the oracle's exact distribution, told the piece count.
- ``graph_drawing``: Draw a computation graph of ``Value`` nodes with matplotlib alone (no Graphviz ``dot`` needed).
- ``next_word_demo``: Widget: type the start of a sentence; see each model's next-word distribution beside the oracle's.
- ``painting``: The painting kit the demos share: Pillow fonts and colours, a bitmap layer (``PaintedDemo``), the bar panels.
- ``palette``: The course palette, one colour per meaning (Okabe and Ito's), safe for colour-blind students and projectors.
- ``qkv_demo``: Widget: the slide's Q·K·V numbers (Thinking / Machines) step by step, with editable vectors and the √d_k toggle.
- ``sampling_demo``: Widget: temperature, top-k and top-p sliders reshape a model's next-word distribution; sample, and the oracle judges.
- ``scaling_demo``: Widgets of notebook 11 (scaling laws against a known floor): the FLOP-budget slider and the fitted surface.
- ``sequence_demo``: Widget: type a sentence and watch recurrent language models read it, one token at a time.
- ``translation_demo``: Widget: type or pick a source passage; watch a translation model write it, one decoder step at a time.
- ``widget_kit``: The frame every projected demo shares (controls, a message line, a fixed-height plot) and the checks of its input.
"""
