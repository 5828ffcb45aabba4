"""Whole-kernel audits: read what the compiler wrote (TTGIR, PTX) and check every layout it uses."""
