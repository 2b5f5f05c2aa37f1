// Drawing a frame: the four seats around the table from this seat's side, its hand, its
// buttons and, when the hand is over, the settlement with every hand shown. Tiles are the
// project's own sprites (/tiles/<name>.png).

import { suitName, t, tileWords } from "./i18n.js";

const $ = (id) => document.getElementById(id);
let selected = null; // index in the drawn hand: the one tap-to-select the page remembers
let deadline = null;
let timer = null;
let noticeTimer = null;
let lastFrame = null;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function tile(name, size, style = "") {
  const img = el("img", `tile ${size}`);
  img.src = `/tiles/${name || "back"}${style ? "-" + style : ""}.png`;
  img.alt = name ? tileWords(name) : "";
  img.draggable = false;
  if (name) img.dataset.tile = name;
  return img;
}

function meldTiles(notation, size) {
  // "[555p]" exposed, "(5555p)" concealed: drawn with its tiles, a concealed kong's ends face down.
  const body = notation.replace(/[[\]()]/g, "");
  const name = body[0] + body[body.length - 1];
  const group = el("span", "meld");
  for (let i = 0; i < body.length - 1; i += 1) {
    const hidden = notation.startsWith("(") && (i === 0 || i === body.length - 2);
    group.append(tile(hidden ? null : name, size));
  }
  return group;
}

function nameOf(frame, seat) {
  return seat === frame.seat ? t("you") : frame.names[seat];
}

export function drawMessage(text) {
  lastFrame = null;
  $("status").textContent = "";
  $("lobby").hidden = true;
  $("board").hidden = true;
  $("me").hidden = true;
  $("actions").textContent = "";
  $("notice").textContent = text;
}

const LOBBY_NOTES = { lobby: "lobby_wait", playing: "lobby_between", finished: "lobby_closed", voided: "lobby_closed" };

/** A table with no hand in play: who sits where, its rules, and what happens next. */
export function drawLobby(lobby) {
  drawMessage("");
  $("settlement").hidden = true;
  $("status").append(el("span", "where", t("table_only", { id: lobby.table })));
  const box = $("lobby");
  box.textContent = "";
  box.hidden = false;
  const open = lobby.status === "lobby" || lobby.status === "playing" || lobby.status === undefined;
  box.append(el("h2", "", open ? t(lobby.status === "playing" ? "lobby_between" : "waiting") : t("lobby_closed")));
  if (lobby.rules !== undefined) box.append(el("p", "rules", t("rules", { name: t(`preset_${lobby.rules || "custom"}`) })));
  const seats = el("ol", "lobby-seats");
  lobby.names.forEach((name, seat) => {
    const item = el("li", seat === lobby.you ? "mine" : "");
    item.append(el("span", "name", name === null ? t("empty_seat") : seat === lobby.you ? `${name} (${t("you")})` : name));
    if (lobby.computer && lobby.computer[seat]) item.append(el("span", "badge cpu", t("computer")));
    seats.append(item);
  });
  box.append(seats);
  if (open) box.append(el("p", "hint", t(lobby.you === null ? "lobby_watch" : LOBBY_NOTES[lobby.status] || "lobby_wait")));
}

export function showNotice(text) {
  $("notice").textContent = text;
  clearTimeout(noticeTimer);
  noticeTimer = setTimeout(() => lastFrame && ($("notice").textContent = prompt(lastFrame)), 2500);
}

function eventLine(frame, event) {
  const name = event.seat !== undefined ? nameOf(frame, event.seat) : "";
  const words = event.tile ? tileWords(event.tile) : "";
  switch (event.type) {
    case "discarded": return t("ev_discarded", { name, tile: words });
    case "punged": return t("ev_punged", { name, tile: words });
    case "kong": return t("ev_kong", { name, tile: words });
    case "kong_declared": return t("ev_kong_declared", { name, tile: words });
    case "won": return t("ev_won", { name, tile: words });
    case "drew": return event.tile ? t("ev_drew_mine", { tile: words }) : t("ev_drew", { name });
    case "void_revealed": return t("ev_void_revealed", { name, suit: suitName(event.suit) });
    case "swapped": return event.tiles ? t("ev_swapped", { tiles: event.tiles.map(tileWords).join(" ") }) : "";
    case "hand_over": return t("ev_hand_over");
    default: return "";
  }
}

function prompt(frame) {
  const view = frame.view;
  if (frame.over) return t(`end_${frame.final.end}`);
  if (frame.seat !== null && frame.auto[frame.seat]) return t("auto");
  if (frame.actions.length) {
    if (view.phase === "swap") return `${t("phase_swap")} · ${t("swap_pick", { n: frame.swap_pick.length })}`;
    if (view.phase === "void") return t("phase_void");
    if (view.phase === "play") return t("your_turn");
    return t("your_claim", { tile: tileWords(view.offered) });
  }
  const others = view.pending.filter((s) => s !== frame.seat).map((s) => nameOf(frame, s));
  return others.length ? t("waiting_for", { name: others.join(", ") }) : "";
}

function drawStatus(frame) {
  const view = frame.view;
  const status = $("status");
  status.textContent = "";
  status.append(el("span", "where", t("table", { id: frame.table, n: frame.hand_number })));
  if (frame.rules !== "chengdu") status.append(el("span", "rules", t(`preset_short_${frame.rules || "custom"}`)));
  if (frame.seat === null) status.append(el("span", "badge watch", t("watching")));
  status.append(el("span", "wall", t("wall", { n: view.wall_count })), el("span", "countdown"));
  deadline = frame.remaining !== null && frame.actions.length ? performance.now() + frame.remaining * 1000 : null;
  tick();
  clearInterval(timer);
  if (deadline !== null) timer = setInterval(tick, 250);
}

function tick() {
  const node = document.querySelector("#status .countdown");
  if (!node) return;
  if (deadline === null) {
    node.textContent = "";
    return;
  }
  const left = Math.max(0, Math.ceil((deadline - performance.now()) / 1000));
  node.textContent = t("seconds", { n: left });
  node.classList.toggle("urgent", left <= 5);
}

function handSize(view, seat) {
  const melded = view.melds[seat].length * 3;
  const dealing = (view.phase === "swap" || view.phase === "void") && view.dealer === seat; // the dealer's 14th
  const turn = (view.phase === "play" && view.current === seat) || dealing ? 1 : 0;
  return Math.max(0, 13 - melded + turn);
}

function drawSeat(frame, seat, box) {
  const view = frame.view;
  box.textContent = "";
  box.classList.toggle("turn", view.pending.includes(seat));
  const head = el("div", "who");
  head.append(el("span", "name", nameOf(frame, seat)));
  if (view.dealer === seat) head.append(el("span", "badge dealer", t("dealer")));
  if (view.voids[seat]) head.append(el("span", "badge void", t("void_suit", { suit: suitName(view.voids[seat]) })));
  if (frame.computer[seat]) head.append(el("span", "badge cpu", t("computer")));
  else if (frame.auto[seat]) head.append(el("span", "badge cpu", t("auto")));
  if (!view.in_play[seat]) head.append(el("span", "badge won", t("won")));
  const chips = view.chips[seat];
  head.append(el("span", `chips ${chips > 0 ? "plus" : chips < 0 ? "minus" : ""}`, (chips > 0 ? "+" : "") + chips));
  box.append(head);
  if (seat !== frame.seat) {
    const row = el("div", "concealed");
    const shown = view.revealed[seat];
    if (shown.length) shown.forEach((name) => row.append(tile(name, "xs")));
    else for (let i = 0; i < handSize(view, seat); i += 1) row.append(tile(null, "xs"));
    view.melds[seat].forEach((m) => row.append(meldTiles(m, "xs")));
    box.append(row);
  }
  const won = view.won_tiles[seat];
  if (won.length) {
    const row = el("div", "won-tiles");
    won.forEach((name) => row.append(tile(name, "xs", "highlight")));
    box.append(row);
  }
  const river = el("div", "river");
  const last = view.offered_by === seat ? view.rivers[seat].length - 1 : -1;
  view.rivers[seat].forEach((name, i) => river.append(tile(name, "xs", i === last ? "highlight" : "")));
  box.append(river);
}

function drawCenter(frame) {
  const view = frame.view;
  const center = $("center");
  center.textContent = "";
  center.append(el("div", "wall-count", String(view.wall_count)));
  if (view.offered) {
    const offer = el("div", "offered");
    offer.append(tile(view.offered, "md", "highlight"), el("span", "by", nameOf(frame, view.offered_by)));
    center.append(offer);
  }
  const lines = frame.events.map((e) => eventLine(frame, e)).filter(Boolean).slice(-2);
  if (lines.length) center.append(el("div", "last-event", lines.join(" · ")));
}

function drawHand(frame, send) {
  const view = frame.view;
  const melds = $("melds");
  melds.textContent = "";
  $("hand").textContent = "";
  if (frame.seat === null) return; // watching: every seat is drawn on the board
  view.melds[frame.seat].forEach((m) => melds.append(meldTiles(m, "sm")));
  view.won_tiles[frame.seat].forEach((name) => melds.append(tile(name, "sm", "highlight")));
  const hand = $("hand");
  hand.textContent = "";
  const tiles = [...view.hand];
  let drawnIndex = -1;
  if (view.drawn && view.phase === "play") {
    tiles.splice(tiles.indexOf(view.drawn), 1);
    tiles.push(view.drawn);
    drawnIndex = tiles.length - 1;
  }
  const swapping = view.phase === "swap" && frame.actions.length > 0;
  const discards = new Map(frame.actions.filter((a) => a.type === "discard").map((a) => [a.tile, a.code]));
  const void_ = view.voids[frame.seat];
  if (selected !== null && (selected >= tiles.length || !discards.has(tiles[selected]))) selected = null;
  tiles.forEach((name, i) => {
    const style = void_ && name[1] === void_ ? "void" : "";
    const img = tile(name, "lg", style);
    const button = el("button", "hand-tile");
    button.append(img);
    if (i === drawnIndex) button.classList.add("drawn");
    const picked = swapping ? frame.swap_pick.includes(i) : i === selected;
    button.classList.toggle("selected", picked);
    const usable = swapping || discards.has(name);
    button.disabled = !usable;
    button.addEventListener("click", () => {
      if (swapping) {
        send({ seq: frame.seq, code: `t${i}` });
      } else if (selected === i) {
        selected = null;
        send({ seq: frame.seq, code: discards.get(name) });
      } else {
        selected = i;
        drawHand(frame, send);
      }
    });
    hand.append(button);
  });
}

function label(action) {
  const words = action.tile ? tileWords(action.tile) : "";
  switch (action.type) {
    case "win": return t("win", { tile: words });
    case "pung": return t("pung", { tile: words });
    case "kong": return t("kong", { tile: words });
    case "pass": return t("pass");
    case "void": return t("void_suit", { suit: suitName(action.suit) });
    case "swap": return t("swap_confirm");
    default: return words;
  }
}

function drawActions(frame, send) {
  const bar = $("actions");
  bar.textContent = "";
  if (frame.over || frame.seat === null) return;
  if (frame.auto[frame.seat]) {
    const back = el("button", "action primary", t("back"));
    back.addEventListener("click", () => send({ seq: 0, code: "back" }));
    bar.append(back);
    return;
  }
  for (const action of frame.actions) {
    if (action.type === "discard") continue;
    if (action.type === "swap" && frame.swap_pick.length !== 3) continue;
    const button = el("button", `action ${action.type}`, label(action));
    button.dataset.code = action.code;
    button.addEventListener("click", () => send({ seq: frame.seq, code: action.code }));
    bar.append(button);
  }
}

function drawSettlement(frame, send) {
  const box = $("settlement");
  if (!frame.over) {
    box.hidden = true;
    return;
  }
  box.textContent = "";
  const card = el("div", "card");
  card.append(el("h2", "", `${t("settlement")} · ${t(`end_${frame.final.end}`)}`));
  const view = frame.view;
  for (let seat = 0; seat < frame.names.length; seat += 1) {
    const row = el("div", "result");
    const chips = frame.final.chips[seat];
    const head = el("div", "who");
    head.append(el("span", "name", nameOf(frame, seat)));
    head.append(el("span", `chips ${chips > 0 ? "plus" : chips < 0 ? "minus" : ""}`, (chips > 0 ? "+" : "") + chips));
    row.append(head);
    const tiles = el("div", "tiles");
    frame.final.hands[seat].forEach((name) => tiles.append(tile(name, "sm")));
    view.melds[seat].forEach((m) => tiles.append(meldTiles(m, "sm")));
    view.won_tiles[seat].forEach((name) => tiles.append(tile(name, "sm", "highlight")));
    view.wins.filter((w) => w.seat === seat && w.from_seat !== null).forEach((w) => tiles.append(tile(w.tile, "sm", "highlight")));
    row.append(tiles);
    for (const win of view.wins.filter((w) => w.seat === seat)) {
      const how = win.from_seat === null ? t("self_drawn") : t("fed_by", { name: nameOf(frame, win.from_seat) });
      const score = win.score;
      const pattern = document.documentElement.lang === "en" ? score.pattern_en : score.pattern;
      const extras = [pattern, ...(score.bonuses || [])].filter(Boolean).join(" ");
      row.append(el("div", "win-line", `${t("won")} ${tileWords(win.tile)} · ${how} · ${extras} ×${score.multiplier}`));
    }
    card.append(row);
  }
  if (frame.can_next) {
    const next = el("button", "action primary", t("next_hand"));
    next.id = "next-hand";
    next.addEventListener("click", () => send({ next: frame.hand_id }));
    card.append(next);
  } else if (frame.seat !== null) {
    card.append(el("p", "hint", t("next_in_group")));
  }
  box.append(card);
  box.hidden = false;
}

export function draw(frame, send) {
  lastFrame = frame;
  $("lobby").hidden = true;
  $("board").hidden = false;
  $("me").hidden = frame.seat === null;
  document.body.dataset.phase = frame.view.phase;
  document.body.classList.toggle("watching", frame.seat === null);
  drawStatus(frame);
  const bottom = frame.seat ?? 0; // a watcher sees the table from seat 1's side
  document.querySelectorAll(".seat").forEach((box) => {
    const seat = (bottom + Number(box.dataset.pos)) % frame.names.length;
    drawSeat(frame, seat, box);
  });
  drawCenter(frame);
  drawHand(frame, send);
  drawActions(frame, send);
  $("notice").textContent = prompt(frame);
  drawSettlement(frame, send);
}
