#!/usr/bin/env bash
# The Kneser-Ney builder's fixtures from KenLM's own lmplz: the ARPA files it writes for
# tests/fixtures/kn_corpus.txt at order 3, unpruned and with --prune 0 1 1, and for kn_blank.txt (the
# same with a blank and a spaces-only line at the end). test_lm_build checks
# every probability and backoff of `clspeech lm`'s model against them (and against
# make_kn_fixture.py's independent Python implementation).
#   tests/ref/make_kn_fixture.sh /path/to/lmplz
# lmplz comes from the kenlm sdist (pip download --no-deps --no-binary kenlm kenlm==0.3.0), built with
# cmake and Debian's libboost-{program-options,system,thread,test}-dev and zlib1g-dev:
#   tar xzf kenlm-0.3.0.tar.gz && cmake -S kenlm-0.3.0 -B b -DCMAKE_BUILD_TYPE=Release &&
#   cmake --build b -j2 --target lmplz      (about 2 minutes on 2 cores; the binary is b/bin/lmplz)
set -euo pipefail
lmplz=${1:?usage: make_kn_fixture.sh LMPLZ}
here=$(cd "$(dirname "$0")/.." && pwd)
text=$here/fixtures/kn_corpus.txt
"$lmplz" -o 3 -S 100M --text "$text" --arpa "$here/fixtures/kn_corpus.3.lmplz.arpa"
"$lmplz" -o 3 -S 100M --prune 0 1 1 --text "$text" --arpa "$here/fixtures/kn_corpus.3.prune011.lmplz.arpa"
"$lmplz" -o 3 -S 100M --text "$here/fixtures/kn_blank.txt" --arpa "$here/fixtures/kn_blank.3.lmplz.arpa"
python3 "$here/ref/make_kn_fixture.py" "$text" 3 "$here/fixtures/kn_corpus.3.arpa"
python3 "$here/ref/make_kn_fixture.py" "$text" 3 "$here/fixtures/kn_corpus.3.prune011.arpa" 0 1 1
