"""A small hand-written graph; every expected result in the contract tests is worked out
by hand from these lines (see the comments in each test)."""

SMALL = """\
#s1 {smoking} [causes] {lung cancer}
    ()[confidence] (high)
    ()[source] {WHO report}
#s2 {吸烟} [同义] {smoking}
#s3 {lung cancer} [leads to] {death}
#s4 {香烟} [导致] {吸烟}
#a1 {cat} [belongs to] {mammal}
#a2 {mammal} [is a] {animal}
#a3 {mammal} [has] {fur}
#a4 {animal} [has] {cells}
#a5 {哺乳动物} [同义] {mammal}
#a6 {哺乳动物} [有] {乳腺}
#p1 {Python 3.11} [is latest release of] {Python}
#p2 {Python 3.12} [is latest release of] {Python}
    ()[supersedes] #p1
#p3 {Python 3.13} [is latest release of] {Python}
    ()[supersedes] #p2
#n1 {free-threaded CPython} [narrows] {CPython}
#n2 {free-threaded CPython} [has] {no GIL}
#n3 {CPython} [written in] {C}
#d1 {distutils} [replaced by] {setuptools}
#d2 {setuptools} [deprecated for] {pyproject build}
"""
