// The page's words: Chinese by default, English when the user's language is English.

const TEXTS = {
  zh: {
    title: "血战到底",
    table: "牌桌 #{id} · 第 {n} 局",
    wall: "牌墙 {n}",
    connecting: "正在连接…",
    reconnecting: "连接断开，正在重连…",
    waiting: "等待开局…",
    closed: "这一局已取消。",
    phase_swap: "换三张：选同一花色的三张牌",
    phase_void: "定缺：选择一门",
    your_turn: "轮到你出牌：点一张牌选中，再点一次打出",
    your_claim: "要这张 {tile} 吗？",
    waiting_for: "等待 {name}",
    swap_confirm: "换出这三张",
    swap_pick: "已选 {n}/3",
    void_suit: "缺{suit}",
    win: "胡 {tile}",
    pung: "碰 {tile}",
    kong: "杠 {tile}",
    pass: "过",
    back: "我回来了",
    auto: "托管中",
    computer: "电脑",
    dealer: "庄",
    won: "胡",
    seconds: "{n} 秒",
    next_hand: "下一局",
    next_in_group: "在群里点“下一局”继续。",
    settlement: "结算",
    end_three_won: "三家胡牌，本局结束",
    end_wall_empty: "流局（查叫）",
    end_first_win: "有人胡牌，本局结束",
    chips: "{n} 分",
    self_drawn: "自摸",
    fed_by: "{name} 点炮",
    ev_discarded: "{name} 打出 {tile}",
    ev_punged: "{name} 碰 {tile}",
    ev_kong: "{name} 杠 {tile}",
    ev_kong_declared: "{name} 补杠 {tile}",
    ev_won: "{name} 胡 {tile}",
    ev_drew: "{name} 摸牌",
    ev_drew_mine: "你摸到 {tile}",
    ev_void_revealed: "{name} 缺{suit}",
    ev_swapped: "换牌完成，收到 {tiles}",
    ev_hand_over: "本局结束",
    refused_stale: "这一步已经过时了。",
    refused_not_your_seat: "这不是你的座位。",
    refused_hand_over: "这一局已经结束。",
    refused_swap_three_only: "只能选三张。",
    refused_swap_one_suit: "三张必须同一花色。",
    refused_error: "出错了，请再试一次。",
    error_forged: "登录信息无效，请从 Telegram 里重新打开牌桌。",
    error_expired: "登录信息已过期，请从 Telegram 里重新打开牌桌。",
    error_malformed: "链接不完整，请重新打开。",
    error_no_table: "没有指定牌桌，请从群里的按钮打开。",
    error_not_your_seat: "你不在这张牌桌上。",
    suits: ["万", "筒", "条"],
    you: "你",
  },
  en: {
    title: "Bloody battle",
    table: "Table #{id} · hand {n}",
    wall: "Wall {n}",
    connecting: "Connecting…",
    reconnecting: "Connection lost, reconnecting…",
    waiting: "Waiting for the hand to start…",
    closed: "This hand was cancelled.",
    phase_swap: "Swap three: pick three tiles of one suit",
    phase_void: "Choose your void suit",
    your_turn: "Your turn: tap a tile to select it, tap again to discard",
    your_claim: "Take this {tile}?",
    waiting_for: "Waiting for {name}",
    swap_confirm: "Pass these three",
    swap_pick: "Picked {n}/3",
    void_suit: "Void {suit}",
    win: "Win {tile}",
    pung: "Pung {tile}",
    kong: "Kong {tile}",
    pass: "Pass",
    back: "I'm back",
    auto: "auto-play",
    computer: "computer",
    dealer: "dealer",
    won: "won",
    seconds: "{n} s",
    next_hand: "Next hand",
    next_in_group: "Press “Next hand” in the group to go on.",
    settlement: "Settlement",
    end_three_won: "Three players won: the hand is over",
    end_wall_empty: "The wall is empty (ready-hand check)",
    end_first_win: "Someone won: the hand is over",
    chips: "{n} chips",
    self_drawn: "self-drawn",
    fed_by: "fed by {name}",
    ev_discarded: "{name} discarded {tile}",
    ev_punged: "{name} punged {tile}",
    ev_kong: "{name} made a kong of {tile}",
    ev_kong_declared: "{name} adds {tile} to a pung",
    ev_won: "{name} won on {tile}",
    ev_drew: "{name} drew",
    ev_drew_mine: "You drew {tile}",
    ev_void_revealed: "{name} is void in {suit}",
    ev_swapped: "Swap done, you received {tiles}",
    ev_hand_over: "The hand is over",
    refused_stale: "That move is out of date.",
    refused_not_your_seat: "This is not your seat.",
    refused_hand_over: "This hand is over.",
    refused_swap_three_only: "Pick exactly three tiles.",
    refused_swap_one_suit: "The three tiles must be of one suit.",
    refused_error: "Something went wrong; please try again.",
    error_forged: "Your login was refused; open the table again from Telegram.",
    error_expired: "Your login has expired; open the table again from Telegram.",
    error_malformed: "This link is incomplete; open it again.",
    error_no_table: "No table was named; open it from the group's button.",
    error_not_your_seat: "You are not seated at this table.",
    suits: ["characters", "dots", "bamboo"],
    you: "You",
  },
};

let current = TEXTS.zh;

/** English only when asked for; everything else reads Chinese. */
export function chooseLanguage(...candidates) {
  const wanted = candidates.find((c) => typeof c === "string" && c.length > 0) || "zh";
  current = wanted.toLowerCase().startsWith("en") ? TEXTS.en : TEXTS.zh;
  document.documentElement.lang = current === TEXTS.en ? "en" : "zh";
  document.title = current.title;
}

export function t(key, params = {}) {
  const text = current[key] ?? TEXTS.en[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (_, name) => String(params[name] ?? ""));
}

const SUIT_INDEX = { m: 0, p: 1, s: 2 };
const ZH_RANKS = "一二三四五六七八九";

export function suitName(letter) {
  return current.suits[SUIT_INDEX[letter]];
}

/** "5p" as people say it: 五筒 / 5 dots. */
export function tileWords(name) {
  const rank = Number(name[0]);
  const suit = current.suits[SUIT_INDEX[name[1]]];
  return current === TEXTS.zh ? ZH_RANKS[rank - 1] + suit : `${rank} ${suit}`;
}
