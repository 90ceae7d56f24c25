"""kcrt.models — whole models written on kcrt.nn.

    rvc         RVC v2's NSF-HiFiGAN generator (the synthesiser of a voice
                conversion), its audio front end, and `python -m
                kcrt.models.rvc` (synth, convert); docs/rvc.md
    rvc_torch   the same generator in plain PyTorch: the reference the
                tests and the real-time-factor comparison run against
"""
