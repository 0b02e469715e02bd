"""Asi, Raman & Talwar, "Faster Rates for Private Adversarial Bandits"
(ICML 2025): the base learners, the two conversions and the EXP4 variants.

Theorem numbers follow the PDF (Thm 3.1, Cor E.1, ...); the LaTeX text in
``shared/papers`` numbers them differently (Thm 4.4 = "Theorem 9")."""
