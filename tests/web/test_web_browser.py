"""The web table in a real browser (headless Debian Chromium): a whole hand by clicking, a reload
mid-hand, a forged Telegram login, the lobby before the deal and a watcher's view, and
screenshots at phone size for review.

Screenshots go to ``$XUEZHAN_SCREENSHOTS`` (default ``/tmp/xuezhan-web-shots``), never into the
repository.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from urllib.parse import quote

from web_pages import click_decision, frame, play_until_over, wait_for_frame, waited_on, watch_errors

from engine.rules import RuleSet
from engine.tiles import tile_name
from storage.models import HandStatus, PlayerKind, TableStatus
from web.auth import seat_token, sign_init_data
from web.hub import WebHub
from web.local import LOCAL_CHAT_ID
from web.server import WebServer

SHOTS = Path(os.environ.get("XUEZHAN_SCREENSHOTS", "/tmp/xuezhan-web-shots"))


async def open_page(browser, url: str, width: int = 390, height: int = 844, locale: str = "zh-CN"):
    context = await browser.new_context(viewport={"width": width, "height": height}, locale=locale,
                                        device_scale_factor=2)
    page = await context.new_page()
    errors = watch_errors(page)
    await page.goto(url)
    return page, errors


async def test_a_whole_hand_by_clicking_against_three_computers(local, browser) -> None:
    table, runner = await local.open_table(1)
    page, errors = await open_page(browser, local.links(local.server.url, table, runner)[0].url)
    first = await wait_for_frame(page)
    assert first["view"]["phase"] == "swap" and len(first["view"]["hand"]) in (13, 14)
    assert await page.locator("#hand button").count() == len(first["view"]["hand"])

    await play_until_over([page])

    assert runner.game.over
    hand = await local.storage.get_hand(runner.hand.id)
    assert hand.status is HandStatus.FINISHED
    settlement = page.locator("#settlement")
    await settlement.wait_for(state="visible")
    results = settlement.locator(".result")
    assert await results.count() == 4
    for seat in range(4):  # every hand is shown, tile by tile
        shown = await results.nth(seat).locator(".tiles img[data-tile]").evaluate_all(
            "imgs => imgs.map(i => i.dataset.tile)")
        for tile in runner.game.hand(seat):
            assert tile_name(tile) in shown
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / "settlement-390x844.png"))

    await page.click("#next-hand")
    await page.wait_for_function("() => window.xuezhan.frame.hand_number === 2 && !window.xuezhan.frame.over")
    assert await settlement.is_hidden()
    assert errors == []


async def test_screenshots_at_phone_sizes_fit_without_scrolling_sideways(local, browser) -> None:
    table, runner = await local.open_table(1)
    url = local.links(local.server.url, table, runner)[0].url
    page, errors = await open_page(browser, url)
    await wait_for_frame(page)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # into the play, with some discards on the table
        f = await frame(page)
        if f["view"]["phase"] in ("play", "claim") and sum(map(len, f["view"]["rivers"])) >= 8:
            break
        if not await click_decision(page):
            await page.wait_for_timeout(30)
    SHOTS.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(SHOTS / "table-390x844.png"))
    assert await page.evaluate("document.documentElement.scrollWidth") <= 390
    assert await page.evaluate("document.documentElement.lang") == "zh"
    assert "牌墙" in await page.inner_text("#status")

    small, _ = await open_page(browser, url, 360, 640)
    await wait_for_frame(small)
    await small.screenshot(path=str(SHOTS / "table-360x640.png"))
    assert await small.evaluate("document.documentElement.scrollWidth") <= 360
    hand_box = await small.locator("#hand").bounding_box()
    assert hand_box is not None and hand_box["x"] >= 0 and hand_box["x"] + hand_box["width"] <= 360

    english, _ = await open_page(browser, url, 1280, 800, locale="en-US")
    await wait_for_frame(english)
    assert "Wall" in await english.inner_text("#status")
    await english.screenshot(path=str(SHOTS / "table-desktop-en.png"))
    assert errors == []


async def settled(page, runner) -> dict:
    """The page's frame once the table waits for a person (computers act at once otherwise) and
    the page shows that state."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if await waited_on(runner) is not None:  # nothing moves until a person acts
            shown = await frame(page)
            if shown is not None and shown["v"] == runner.logged:
                return shown
        await page.wait_for_timeout(50)
    raise AssertionError("the page never caught up with the table")


async def test_a_reload_mid_hand_catches_up_from_the_log(local, browser) -> None:
    """Alice reloads her tab mid-hand and sees the table as it is; later she goes away while Bob and
    the computers play on, and her first frame back carries the events she missed.

    She leaves only when the table waits for Bob alone, and her absence counts from when the server
    has closed her socket: so everything logged after ``seen`` happened while she was away, and the
    table cannot have moved on to a decision of hers meanwhile (it would wait for her for good)."""
    table, runner = await local.open_table(2)
    links = local.links(local.server.url, table, runner)
    alice_id = runner.seats[0].user_id
    alice, _ = await open_page(browser, links[0].url)
    bob, _ = await open_page(browser, links[1].url)
    await wait_for_frame(alice)
    await wait_for_frame(bob)
    deadline = time.monotonic() + 120  # a guard against a stall, far beyond a loaded run's ~40 s
    while runner.game.phase.value not in ("play", "claim"):
        assert time.monotonic() < deadline, "the swap and void did not end"
        acted = [await click_decision(page) for page in (alice, bob)]
        if not any(acted):
            await alice.wait_for_timeout(30)

    await alice.reload()  # the same tab: the page remembers what it saw
    after = await settled(alice, runner)
    assert after["view"]["hand"] == [tile_name(t) for t in runner.game.hand(after["seat"])]

    while await waited_on(runner) != {1}:  # Alice plays until the table waits for Bob alone
        assert not runner.game.over, "the hand ended before Bob's first turn"
        assert time.monotonic() < deadline, "the table never came to wait for Bob alone"
        if not await click_decision(alice):
            await alice.wait_for_timeout(30)
    await alice.goto("about:blank")  # away while the others play on
    while any(v.user_id == alice_id for v in local.hub.viewers.get(table.id, ())):
        await bob.wait_for_timeout(30)
    assert await waited_on(runner) == {1}, "only Bob can move the table"
    seen = runner.logged
    while (runner.logged == seen or runner.state[0].prompt_seq is None) and not runner.game.over:
        assert time.monotonic() < deadline, "the table did not go on"
        if not await click_decision(bob):
            await bob.wait_for_timeout(30)
    missed = runner.logged - seen
    assert missed >= 1
    received: list[dict] = []
    alice.on("websocket", lambda ws: ws.on("framereceived", lambda payload: received.append(json.loads(payload))))
    await alice.goto(links[0].url)
    back = await settled(alice, runner)
    assert back["view"]["hand"] == [tile_name(t) for t in runner.game.hand(back["seat"])]
    first = next(f for f in received if f["type"] == "state")
    assert first["events"], "the events missed while away come with the first frame"
    if not runner.game.over:
        await play_until_over([alice, bob])
    assert runner.game.over


async def test_a_forged_telegram_login_is_refused_on_the_page(browser) -> None:
    hub = WebHub()
    server = WebServer(hub, bot_token="123456:" + "A" * 35)
    url = await server.start()
    try:
        forged = sign_init_data({"auth_date": str(int(time.time())), "user": '{"id":42,"first_name":"Eve"}'},
                                "999999:" + "B" * 35)
        page, errors = await open_page(browser, f"{url}?table=1#tgWebAppData={quote(forged)}")
        await page.wait_for_function("() => document.getElementById('notice').textContent.includes('登录信息无效')")
        assert await page.locator("#hand button").count() == 0
        assert errors == []
    finally:
        await server.stop()


async def test_the_lobby_before_the_deal_then_the_table_and_a_watchers_view(local, browser) -> None:
    """Ann opens her seat's link before the hand is dealt: the lobby (who sits where, 血流成河).
    Someone without a seat opens the table: the lobby, then the open table with every hand face
    down. When the hand is dealt both pages turn into the table by themselves."""
    storage = local.storage
    await storage.get_chat(LOCAL_CHAT_ID)
    table = await storage.create_table(LOCAL_CHAT_ID, 1)
    await storage.set_table_rules(table.id, RuleSet.preset("xueliu").to_dict())
    await storage.save_user(1, "Ann", started_dm=False)
    ann_player = await storage.player_for_user(LOCAL_CHAT_ID, 1, "Ann")
    table = await storage.set_seat(table.id, 0, ann_player.id)
    ann, ann_errors = await open_page(browser, f"{local.server.url}?seat={seat_token(local.secret, table.id, 1)}")
    watcher, watch_errors = await open_page(browser, f"{local.server.url}?table={table.id}")
    for page in (ann, watcher):
        await page.locator("#lobby").wait_for(state="visible")
        assert "血流成河" in await page.inner_text("#lobby")
        assert await page.locator(".lobby-seats li").count() == 4
    assert "Ann (你)" in await ann.inner_text("#lobby")
    assert "观战" in await watcher.inner_text("#lobby")
    SHOTS.mkdir(parents=True, exist_ok=True)
    await ann.screenshot(path=str(SHOTS / "lobby-390x844.png"))

    for seat in (1, 2, 3):
        computer = await storage.named_player(LOCAL_CHAT_ID, f"AI-{seat}", PlayerKind.COMPUTER)
        table = await storage.set_seat(table.id, seat, computer.id)
    table = await storage.set_table_status(table.id, TableStatus.PLAYING)
    runner = await local.start_hand(table, dealer=0)
    mine = await wait_for_frame(ann)
    assert mine["seat"] == 0 and mine["rules"] == "xueliu"
    watched = await wait_for_frame(watcher)
    assert watched["seat"] is None and await watcher.locator("#lobby").is_hidden()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # Ann plays until some tiles lie on the table
        f = await frame(ann)
        if f["view"]["phase"] in ("play", "claim") and sum(map(len, f["view"]["rivers"])) >= 8:
            break
        if not await click_decision(ann):
            await ann.wait_for_timeout(30)
    await watcher.wait_for_function(f"() => window.xuezhan.frame.v >= {runner.logged}")
    assert await watcher.locator("#me").is_hidden() and await watcher.locator("#hand button").count() == 0
    assert "观战" in await watcher.inner_text("#status") and "血流成河" in await watcher.inner_text("#status")
    shown = await watcher.locator("#board img[data-tile]").evaluate_all("imgs => imgs.map(i => i.dataset.tile)")
    open_tiles = [tile_name(t) for river in runner.game.rivers for t in river]
    open_tiles += [tile_name(m.tile) for melds in runner.game.melds for m in melds]
    assert set(shown) <= set(open_tiles) | {tile_name(w.tile) for w in runner.game.wins}
    await watcher.screenshot(path=str(SHOTS / "watch-390x844.png"))
    assert await watcher.evaluate("document.documentElement.scrollWidth") <= 390
    assert ann_errors == [] and watch_errors == []
