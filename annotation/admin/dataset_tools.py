"""Pages for one dataset that a higher app adds to the dataset admin (retrieval: candidate pools;
testsets: the test-set build), pages it adds to the dataset list (testsets: importing a released
test set), and links it adds to the question admin (retrieval: the pool review page).

The dataset admin lists a link to each registered tool on every test-set dataset and serves it
at ``<pk>/<slug>/`` under its own URLs (URL name ``admin:annotation_dataset_<slug>``); a list
page at ``<slug>/`` (URL name ``admin:annotation_dataset_<name>``), linked above the list. The
registering app calls ``dataset_tool_register`` (``dataset_list_page_register``,
``question_link_register``) from its ``AppConfig.ready()``, so this app never imports it.
"""

from collections.abc import Callable
from dataclasses import dataclass

from django.contrib.admin import ModelAdmin
from django.http import HttpRequest, HttpResponse

from annotation.models import Dataset, Question


@dataclass(frozen=True)
class DatasetTool:
    slug: str  # in the URL and its name
    label: str  # the link's text, and what a rating dataset is told it cannot have
    view: Callable[[ModelAdmin, HttpRequest, Dataset], HttpResponse]
    permission: str = "annotation.change_dataset"  # what a staff account needs to open it


_tools: dict[str, DatasetTool] = {}


def dataset_tool_register(tool: DatasetTool) -> None:
    _tools[tool.slug] = tool


def dataset_tools() -> list[DatasetTool]:
    return list(_tools.values())


@dataclass(frozen=True)
class DatasetListPage:
    slug: str  # in the URL
    name: str  # the URL's name: admin:annotation_dataset_<name>
    label: str  # the link's text above the dataset list
    view: Callable[[ModelAdmin, HttpRequest], HttpResponse]
    permission: str  # what a staff account needs to open it


_list_pages: dict[str, DatasetListPage] = {}


def dataset_list_page_register(page: DatasetListPage) -> None:
    _list_pages[page.slug] = page


def dataset_list_pages() -> list[DatasetListPage]:
    return list(_list_pages.values())


@dataclass(frozen=True)
class QuestionLink:
    label: str
    url: Callable[[Question], str]  # where it leads for this question


_question_links: dict[str, QuestionLink] = {}


def question_link_register(link: QuestionLink) -> None:
    _question_links[link.label] = link


def question_links() -> list[QuestionLink]:
    return list(_question_links.values())
