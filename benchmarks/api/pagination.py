"""Pages of a list: ?page=N, and ?page_size= up to MAX_PAGE_SIZE."""

from rest_framework.pagination import PageNumberPagination

PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000


class Pages(PageNumberPagination):
    page_size = PAGE_SIZE
    page_size_query_param = "page_size"
    max_page_size = MAX_PAGE_SIZE
