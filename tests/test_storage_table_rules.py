"""A table's own rules (chosen by its opener in the lobby): stored with the table, fixed once it plays."""

from __future__ import annotations

import pytest
from test_storage import seated_table

from storage import InvalidWrite, open_storage

pytestmark = pytest.mark.both_backends


@pytest.fixture
async def store(db_url):
    opened = await open_storage(db_url)
    yield opened
    await opened.close()


async def test_a_tables_rules_change_in_the_lobby_only_and_survive_a_reopen(store, db_url):
    table, _ = await seated_table(store, chat_id=-1)
    assert table.rules is None  # the chat's rules until the opener picks others
    chosen = {"mode": "xueliu", "cap": 3}
    assert (await store.set_table_rules(table.id, chosen)).rules == chosen
    assert (await store.get_table(table.id)).rules == chosen
    assert (await store.open_tables(-1))[0].rules == chosen
    assert (await store.set_table_rules(table.id, None)).rules is None  # back to the chat's
    await store.set_table_rules(table.id, chosen)

    await store.start_hand(table.id, {"mode": "xueliu", "cap": 3, "base": 1}, seed=1, dealer=0)
    with pytest.raises(InvalidWrite):
        await store.set_table_rules(table.id, {"mode": "xuezhan"})
    reopened = await open_storage(db_url)  # another connection reads what was committed
    try:
        assert (await reopened.get_table(table.id)).rules == chosen
    finally:
        await reopened.close()
