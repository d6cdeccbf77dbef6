"""mhanw.pipeline.provenance: the commit a build's figures come from, for the captions.

"unknown" outside git (a fresh copy of the sources, as the pipeline tests use),
the short hash of a clean checkout, "(dirty)" when tracked files differ from it
(not when a file was only touched), and a file rewritten only when its content
changes.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from mhanw.pipeline import provenance


def project(tmp_path):
    """A minimal tree with one tracked file."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "a.txt").write_text("a\n")
    return tmp_path


def run(tree, *args):
    assert args == ("--print",)
    return provenance.content(tree)


def git(tree, *args):
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(["git", "-C", str(tree), *args], capture_output=True, text=True, check=True, env=env).stdout


def commit_macro(text):
    line = next(l for l in text.splitlines() if l.startswith("\\newcommand{\\BuildCommit}"))
    return line[len("\\newcommand{\\BuildCommit}{") : -1]


def test_outside_git_the_commit_is_unknown(tmp_path):
    tree = project(tmp_path)
    assert commit_macro(run(tree, "--print")) == "unknown"
    assert "\\newcommand{\\BookChapterBase}{../}" in run(tree, "--print")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_clean_dirty_and_touched_checkouts(tmp_path):
    tree = project(tmp_path)
    git(tree, "init", "-q")
    git(tree, "add", "-A")
    git(tree, "commit", "-qm", "x")
    head = git(tree, "rev-parse", "HEAD").strip()
    assert commit_macro(run(tree, "--print")) == head[:7]
    os.utime(tree / "a.txt", (1, 1))  # touched, same content: still clean
    assert commit_macro(run(tree, "--print")) == head[:7]
    (tree / "a.txt").write_text("b\n")
    assert commit_macro(run(tree, "--print")) == head[:7] + " (dirty)"
    (tree / "untracked.txt").write_text("new\n")  # untracked files do not make a tree dirty
    (tree / "a.txt").write_text("a\n")
    assert commit_macro(run(tree, "--print")) == head[:7]


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_repository_that_only_encloses_the_tree_is_not_used(tmp_path):
    git(tmp_path, "init", "-q")
    tree = project(tmp_path / "copy")
    assert commit_macro(run(tree, "--print")) == "unknown"


def test_the_file_is_rewritten_only_when_its_content_changes(tmp_path):
    tree = project(tmp_path)
    out = tree / "paper" / "generated" / "provenance.tex"
    assert provenance.write(tree, out)
    assert out.read_text() == provenance.content(tree)
    os.utime(out, (1, 1))
    assert not provenance.write(tree, out)
    assert out.stat().st_mtime == 1
    out.write_text("stale")
    assert provenance.write(tree, out)
    assert out.read_text() == provenance.content(tree)
