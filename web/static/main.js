// The page's connection: say who we are, draw every frame the server sends, send back the
// codes it offered. The page decides nothing: it shows the seat's view and its legal actions.

import { chooseLanguage, t } from "./i18n.js";
import { draw, drawLobby, drawMessage, showNotice } from "./render.js";
import * as telegram from "./telegram.js";

const params = new URLSearchParams(location.search);
const seatToken = params.get("seat");
const savedKey = `xuezhan:${seatToken || params.get("table") || telegram.startParam}`;

let socket = null;
let frame = null;
let retry = 500;
let readied = false;

chooseLanguage(params.get("lang"), telegram.userLanguage(), navigator.language);
telegram.setUp(onBack);
drawMessage(t("connecting"));

function saved() {
  try {
    return JSON.parse(sessionStorage.getItem(savedKey) || "{}");
  } catch {
    return {};
  }
}

function hello() {
  const last = saved();
  const body = { since: last.v ?? null, hand_id: last.hand_id ?? null };
  if (seatToken) body.token = seatToken;
  else if (telegram.initData) {
    body.initData = telegram.initData;
    body.table = params.get("table") || telegram.startParam;
  } else {
    body.watch = params.get("table"); // no seat: watch the open table (a server without Telegram)
  }
  return { hello: body };
}

function connect() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${scheme}://${location.host}/ws`);
  let refused = false;
  socket.onopen = () => socket.send(JSON.stringify(hello()));
  socket.onmessage = (message) => {
    const data = JSON.parse(message.data);
    if (data.type === "error") {
      refused = true;
      drawMessage(t(`error_${data.key}`));
    } else if (data.type === "welcome") {
      retry = 500;
    } else if (data.type === "lobby") {
      frame = null;
      drawLobby(data);
    } else if (data.type === "closed") {
      drawMessage(t("closed"));
    } else if (data.type === "refused") {
      showNotice(t(`refused_${data.key}`));
    } else if (data.type === "state") {
      frame = data;
      sessionStorage.setItem(savedKey, JSON.stringify({ v: data.v, hand_id: data.hand_id }));
      draw(frame, send);
      if (!readied) {
        readied = true;
        telegram.ready();
      }
    }
  };
  socket.onclose = (event) => {
    if (refused || event.code === 4001) return;
    showNotice(t("reconnecting"));
    setTimeout(connect, retry);
    retry = Math.min(retry * 2, 5000);
  };
}

/** Send a decision the server offered: its code with the decision's sequence. */
function send(action) {
  if (socket && socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ act: action }));
}

function onBack() {
  const settlement = document.getElementById("settlement");
  if (!settlement.hidden) settlement.hidden = true;
  else telegram.close();
}

window.addEventListener("pageshow", () => {
  if (!socket) connect();
});
window.xuezhan = { get frame() { return frame; } }; // for the browser tests and curious people
