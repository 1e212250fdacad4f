"""HTML pages read as a browser builds them (stdlib `html.parser`), to assert what a person sees:
text, links, form controls. No selector engine: a few finders are enough for these tests."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Node:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Node | None) -> None:
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Node | str] = []

    def text(self) -> str:
        """The text a person reads: descendants' text, white space collapsed."""
        parts = [child if isinstance(child, str) else child.text() for child in self.children]
        return " ".join(" ".join(parts).split())

    def walk(self) -> Iterator[Node]:
        for child in self.children:
            if isinstance(child, Node):
                yield child
                yield from child.walk()

    def all(self, tag: str | None = None, **attrs: str) -> list[Node]:
        """Descendants with this tag (any without) whose attributes have these values (`class_`:
        one of the class's words; `for_`: for; `aria_label`: aria-label)."""
        return [node for node in self.walk() if node._is(tag, attrs)]

    def one(self, tag: str | None = None, **attrs: str) -> Node:
        found = self.all(tag, **attrs)
        assert len(found) == 1, f"{len(found)} <{tag}> with {attrs}"
        return found[0]

    def _is(self, tag: str | None, attrs: dict[str, str]) -> bool:
        if tag is not None and self.tag != tag:
            return False
        for name, value in attrs.items():
            if name == "class_":
                if value not in (self.attrs.get("class") or "").split():
                    return False
            elif self.attrs.get(name[:-1] if name.endswith("_") else name.replace("_", "-")) != value:
                return False
        return True

    def __getitem__(self, name: str) -> str | None:
        return self.attrs.get(name)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {}, None)
        self.open = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs), self.open)
        self.open.children.append(node)
        if tag not in VOID:
            self.open = node

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.open
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.open = node.parent

    def handle_data(self, data: str) -> None:
        self.open.children.append(data)


def page(html: str | bytes) -> Node:
    builder = _Builder()
    builder.feed(html.decode() if isinstance(html, bytes) else html)
    builder.close()
    return builder.root


def first(nodes: list[Node], test: Callable[[Node], bool]) -> Node:
    return next(node for node in nodes if test(node))
