"""Two copies of one live hand, as two bot workers hold them, on one PostgreSQL database.

Each "worker" is a ``TableRunner`` with its own storage connection and database timers; presses
go to either at random. A copy that is behind catches up from the log before it applies a press,
so every press applies once, in order, and both copies end as the log replays.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import pytest

from bot.table import callbacks
from bot.table.runner import Limits, Refusal, SeatPlayer, TableRunner
from bot.table.timers import DatabaseScheduler
from engine.actions import Action
from engine.events import Event
from engine.game import Game
from engine.rules import RuleSet
from storage import open_storage
from storage.models import Timer

CHAT = -1001
USERS = (101, 102, 103, 104)
RULES = RuleSet.preset("classic").with_changes(declare_void=False)  # no swap, no void: play at once


class Watcher:
    """The views of a table, reduced to what the test checks: which steps were shown."""

    def __init__(self) -> None:
        self.changes = 0
        self.prompts: list[int] = []  # seats whose buttons were shown again without a move

    async def hand_started(self, runner: TableRunner, resumed: bool) -> None:
        return None

    async def changed(self, runner: TableRunner, events: Sequence[Event]) -> None:
        self.changes += 1

    async def prompt(self, runner: TableRunner, seat: int) -> None:
        self.prompts.append(seat)

    async def seat_controlled(self, runner: TableRunner, seat: int, reason: str) -> None:
        return None


async def never_fired(timer: Timer) -> None:
    raise AssertionError(f"{timer.key} fired: this test does not poll")


@asynccontextmanager
async def two_copies(postgres_server, rules: RuleSet) -> AsyncIterator[list[TableRunner]]:
    """One hand dealt with ``rules``, held by two runners with storage connections of their own;
    the first deals it, the second attaches to it."""
    url = await postgres_server.create_database()
    stores = [await open_storage(url), await open_storage(url)]
    players = [await stores[0].player_for_user(CHAT, user, f"P{user}") for user in USERS]
    table = await stores[0].create_table(CHAT, None)
    for seat, player in enumerate(players):
        await stores[0].set_seat(table.id, seat, player.id)
    hand = await stores[0].start_hand(table.id, rules.to_dict(), seed=18, dealer=0)
    seats = [SeatPlayer(p.id, p.name, p.user_id) for p in players]
    runners = [
        TableRunner(table_id=table.id, chat_id=CHAT, hand=hand, game=Game(rules, 18, 0), seats=seats, storage=store,
                    presenter=Watcher(), scheduler=DatabaseScheduler(store, never_fired), limits=Limits())
        for store in stores
    ]
    try:
        await runners[0].start()
        await runners[1].attach()
        yield runners
    finally:
        for runner in runners:
            await runner.close()
        for store in stores:
            await store.close()
        await postgres_server.drop_database(url)


@pytest.fixture
async def two_workers(postgres_server):
    async with two_copies(postgres_server, RULES) as runners:
        yield runners


def next_press(runner: TableRunner) -> tuple[int, int, str]:
    """(user, seq, code) of a press the current state asks for: the first open decision's first choice."""
    seat = next(s for s in range(4) if runner.state[s].prompt_seq is not None)
    action = runner.state[seat].legal[0]
    return USERS[seat], runner.state[seat].prompt_seq, callbacks.action_code(action)  # type: ignore[return-value]


async def test_the_same_press_at_two_workers_applies_once(two_workers):
    first, second = two_workers
    press = next_press(first)
    outcomes = await asyncio.gather(first.press(*press), second.press(*press), return_exceptions=True)
    assert sorted(type(o).__name__ for o in outcomes) == ["NoneType", "Refusal"]
    assert next(o for o in outcomes if o is not None).key == "stale"
    assert len(await first.storage.hand_actions(first.hand.id)) == 1
    assert first.logged == 1 or second.logged == 1


async def test_presses_spread_over_two_workers_apply_in_order_and_both_copies_agree(two_workers):
    pick = random.Random(18)
    current = two_workers[0]  # the copy that made the latest step (the test reads the next press there)
    steps = 0
    while not current.game.over and steps < 60:
        press = next_press(current)
        runner = pick.choice(two_workers)
        await runner.press(*press)  # a copy that is behind catches up first: never refused, never a conflict
        current, steps = runner, steps + 1
    logged = [Action.from_dict(a.action) for a in await current.storage.hand_actions(current.hand.id)]
    assert len(logged) == steps == current.logged
    for runner in two_workers:
        await runner.wake()  # a step that changes nothing: the copy catches up
        assert runner.game.to_dict() == Game.replay(RULES, 18, 0, logged).to_dict()
        assert not await runner.behind()
    assert sum(runner.presenter.changes for runner in two_workers) == steps  # each step shown once
    assert await current.storage.verify() == []


async def test_timers_and_seat_states_are_the_tables_not_a_workers(two_workers):
    first, second = two_workers
    await first.press(*next_press(first))
    timers = await first.storage.timers()
    seat = next(s for s in range(4) if first.state[s].prompt_seq is not None)
    assert timers[f"xz-timer:{first.table_id}:{seat}"][1] == {"seq": first.state[seat].prompt_seq}
    assert f"xz-wake:{first.table_id}" in timers
    # 托管 taken on one worker holds on the other; a deadline fired there finds the same decision.
    other = next(s for s in range(4) if s != seat)
    await first.take_over(other, "blocked")
    await second.wake()
    assert second.state[other].auto and second.controlled(other)
    assert second.state[seat].prompt_seq == first.state[seat].prompt_seq
    await second.expire(seat, second.state[seat].prompt_seq)  # the deadline, fired by the other worker
    assert len(await first.storage.hand_actions(first.hand.id)) >= 2
    with pytest.raises(Refusal):  # the person's late press on the first worker is stale now
        await first.press(USERS[seat], first.state[seat].prompt_seq or 0, "x")


async def test_a_table_handed_over_keeps_each_open_decisions_deadline(two_workers):
    """A worker that stops hands its tables over (their watches come due at once): the one taking
    a table up sets the open decisions' deadlines again with the time they had left, not anew."""
    first, second = two_workers
    await first.press(*next_press(first))
    seat = next(s for s in range(4) if first.state[s].prompt_seq is not None)
    key = f"xz-timer:{first.table_id}:{seat}"
    due = (await first.storage.timers())[key][0]
    await asyncio.sleep(1.0)
    await second.wake()
    assert second.state[seat].prompt_seq == first.state[seat].prompt_seq
    assert abs((await first.storage.timers())[key][0] - due) < 0.5  # a full time again would be >= 1 s later


async def test_prompts_a_worker_could_not_save_are_opened_and_shown_by_the_next(two_workers):
    """The worker that logged a move lost the database before saving the prompts that move opened
    (the seat states still describe the move before). The next worker to catch up opens those
    prompts again and shows them: its saving them makes the first worker's DM updates stand down."""
    first, second = two_workers
    before = first._states()  # the seat states as saved before the move
    await first.press(*next_press(first))
    if first._driver is not None:
        await first._driver  # its computer players' turn (none): a step of its own that catches up
    await first.storage.save_seat_states(first.hand.id, before)  # as if the save after the move was lost
    with pytest.raises(Refusal):  # any step catches up first: here an out-of-date press
        await second.press(USERS[0], -1, "d0")
    seat = next(s for s in range(4) if second.state[s].prompt_seq is not None)
    assert second.state[seat].prompt_seq == first.logged  # the decision the move opened
    assert seat in second.presenter.prompts


async def test_swap_picks_made_one_after_another_reach_the_other_worker(postgres_server):
    """Each toggle is saved for the other workers. (The saved copy of the seat states shared the
    live list of picks, so a pick added in place compared equal to what was saved and was not
    saved: the other worker's next step overwrote it, and a person's DM lost a pick of three.)"""
    rules = RULES.with_changes(swap_three=True, swap_direction="clockwise")
    async with two_copies(postgres_server, rules) as (first, second):
        for position in (0, 1):
            await first.press(USERS[0], first.state[0].prompt_seq, f"t{position}")  # type: ignore[arg-type]
        await second.press(USERS[0], second.state[0].prompt_seq, "t2")  # type: ignore[arg-type]
        assert second.state[0].swap_pick == [0, 1, 2]
