"""The engine's two word rules: CodeLens's identifier split, and 2e's whole words."""

import pytest
from bm25_reference import spelled

from crmatrix.identifiers import alnum_words, words


@pytest.mark.parametrize("name,expected", [
    ("parseHTTPResponse", ("parse", "HTTP", "Response")),
    ("load_config", ("load", "config")),
    ("getDonationRankings", ("get", "Donation", "Rankings")),
    ("MAX_LEN", ("MAX", "LEN")),
    ("utf8_decode", ("utf8", "decode")),
    ("HTTP2Server", ("HTTP2", "Server")),
    ("Vec3D", ("Vec3D",)),            # a capital after a digit opens no word unless a lowercase follows
    ("0x7F", ("0x7F",)),
    ("__init__", ("init",)),
    ("größeBerechnen", ("größe", "Berechnen")),  # case is Unicode's, as in CodeLens (Rust char)
    ("parse", ("parse",)),
    ("", ()),
])
def test_identifier_words_keep_case_acronyms_and_digits(name, expected):
    assert words(name) == expected


def test_the_bm25_reference_spells_every_identifier_of_a_text_as_its_words():
    assert spelled("fn parseHTTPResponse(raw_body: &[u8]) -> 0x7F") == (
        "fn parse HTTP Response(raw body: &[u8]) -> 0x7F")


def test_alnum_words_are_lowercase_ascii_runs_and_camel_case_is_no_boundary():
    assert alnum_words("parseJson_body src/json-parse.py") == ["parsejson", "body", "src", "json", "parse", "py"]
    assert alnum_words("  __ ") == []
    assert alnum_words("größe") == ["gr", "e"]  # letters outside ASCII are boundaries, as they always were in 2e
