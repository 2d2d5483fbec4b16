"""A visitor's caption is plain words: the scenes' descriptions and the kiosk's captions
cite no docs (the references are in the scene's `references`, for the docs)."""

import pytest

from slinky3d.errors import SceneError
from slinky3d.scene import loader
from slinky3d.scene.validate import DOC_REFERENCE

BASE = """
title = "t"
{line}
[slinky]
preset = "plastic"
"""


@pytest.mark.parametrize("path", loader.shipped(), ids=lambda p: p.stem)
def test_shipped_descriptions_cite_no_docs(path):
    sc = loader.load(str(path))
    assert sc.description and not DOC_REFERENCE.search(sc.description)
    assert sc.references.startswith("docs/")  # where the docs explain it


def test_the_kiosk_captions_cite_no_docs():
    from slinky3d.viewer.kiosk.playlist import caption_of, load_playlist

    playlist = load_playlist(None)
    for entry in playlist.entries:
        title, text = caption_of(entry, loader.load(entry.name))
        assert text and not DOC_REFERENCE.search(title + " " + text), entry.name


@pytest.mark.parametrize("text", ["the static shape (docs/model.md section 4)",
                                  "see model.md", "as in section 8"])
def test_a_description_citing_the_docs_is_a_one_line_error(text):
    with pytest.raises(SceneError, match="description: a caption for visitors cites") as e:
        loader.loads(BASE.format(line=f'description = "{text}"'))
    assert "\n" not in str(e.value)
    sc = loader.loads(BASE.format(line='description = "plain"\nreferences = "docs/model.md"'))
    assert (sc.description, sc.references) == ("plain", "docs/model.md")
