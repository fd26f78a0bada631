from django import template

from benchmarks.views.prepare import PrepareForm, prepare_rows

register = template.Library()


@register.inclusion_tag("benchmarks/_prepare.html", takes_context=True)
def prepare_panel(context):
    """The board page's "prepare for benchmarks" form: as posted (with its errors) when the
    page shows a refused post, else fresh."""
    form = context.get("prepare_form") or PrepareForm()
    facts = context.get("facts")
    return {
        "board": context["board"],
        "facts": facts,
        "prepare_form": form,
        "prepare_rows": prepare_rows(facts, form),
        "csrf_token": context.get("csrf_token"),
    }
