"""The bridge's `images` entries sent as `{data, name}` (an image pasted into the VS Code chat
panel): what is not an acceptable image is an invalid-params error naming it, checked before
anything is decoded or sent, whatever size or name the sender gave."""

from __future__ import annotations

import base64

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from openvaala_lsp.images import image_params
from openvaala_server.domain.images import MAX_IMAGE_BYTES

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


def test_a_pasted_image_is_sent_with_its_name_and_kind() -> None:
    [sent] = image_params([{"data": base64.b64encode(PNG).decode(), "name": "../../shot.png"}])
    assert sent["mediaType"] == "image/png"
    assert base64.b64decode(str(sent["data"])) == PNG
    assert sent["name"] == "../../shot.png"  # shown only: stored by content (docs/storage.md)


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"data": "A" * (MAX_IMAGE_BYTES * 2), "name": "huge.png"}, "huge.png is larger than"),
        ({"data": "not base64!", "name": "x.png"}, "x.png is not valid base64"),
        ({"data": 7}, "an image: 'data' must be a base64 string"),
        ({"data": base64.b64encode(b"<svg/>").decode(), "name": "a.svg"}, "a.svg is not a PNG"),
    ],
)
def test_a_bad_pasted_image_is_refused_naming_it(entry: dict[str, object], said: str) -> None:
    with pytest.raises(JsonRpcInvalidParams) as caught:
        image_params([entry])
    assert said in str(caught.value)


def test_a_long_name_is_cut_in_the_error_too() -> None:
    with pytest.raises(JsonRpcInvalidParams) as caught:
        image_params([{"data": "@@", "name": "n" * 1_000_000}])
    assert len(str(caught.value)) < 1000
