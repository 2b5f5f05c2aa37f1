// Inside Telegram: the launch data from the URL fragment, and the Mini App events we use
// (ready, expand, back button, theme and safe areas), spoken directly so the page needs no
// script from outside. Outside Telegram every function here does nothing.

const launch = new URLSearchParams(location.hash.slice(1));
export const initData = launch.get("tgWebAppData") || "";
export const startParam = launch.get("tgWebAppStartParam") || "";
export const insideTelegram = initData.length > 0;

const listeners = {};

function postEvent(type, data = {}) {
  if (!insideTelegram) return;
  const body = JSON.stringify(data);
  if (window.TelegramWebviewProxy) {
    window.TelegramWebviewProxy.postEvent(type, body);
  } else if (window.external && "notify" in window.external) {
    window.external.notify(JSON.stringify({ eventType: type, eventData: data }));
  } else {
    window.parent.postMessage(JSON.stringify({ eventType: type, eventData: data }), "https://web.telegram.org");
  }
}

function receive(type, data) {
  for (const listener of listeners[type] || []) listener(data || {});
}

// Mobile clients call this function; Telegram Web posts messages to the frame.
window.Telegram = window.Telegram || {};
window.Telegram.WebView = { receiveEvent: receive };
window.addEventListener("message", (event) => {
  try {
    const message = JSON.parse(event.data);
    if (message && message.eventType) receive(message.eventType, message.eventData);
  } catch {
    /* not a Telegram message */
  }
});

export function on(type, listener) {
  (listeners[type] = listeners[type] || []).push(listener);
}

/** The user's language as Telegram reports it (unsigned here; the server checks initData). */
export function userLanguage() {
  try {
    return JSON.parse(new URLSearchParams(initData).get("user") || "{}").language_code || "";
  } catch {
    return "";
  }
}

const THEME_VARS = {
  bg_color: "--bg", text_color: "--text", hint_color: "--hint", button_color: "--button",
  button_text_color: "--button-text", secondary_bg_color: "--panel", accent_text_color: "--accent",
  destructive_text_color: "--danger",
};

function applyTheme(params) {
  for (const [key, variable] of Object.entries(THEME_VARS)) {
    if (params[key]) document.documentElement.style.setProperty(variable, params[key]);
  }
}

function applyInsets(prefix, insets) {
  for (const side of ["top", "bottom", "left", "right"]) {
    document.documentElement.style.setProperty(`--${prefix}-${side}`, `${Number(insets[side] || 0)}px`);
  }
}

/** Theme, safe areas and the back button; call ``ready`` once the table is drawn. */
export function setUp(onBack) {
  if (!insideTelegram) return;
  document.documentElement.classList.add("in-telegram");
  try {
    applyTheme(JSON.parse(launch.get("tgWebAppThemeParams") || "{}"));
  } catch {
    /* keep the page's colours */
  }
  on("theme_changed", (data) => applyTheme(data.theme_params || {}));
  on("safe_area_changed", (data) => applyInsets("tg-safe", data));
  on("content_safe_area_changed", (data) => applyInsets("tg-content", data));
  on("back_button_pressed", onBack);
  postEvent("web_app_expand");
  postEvent("web_app_request_theme");
  postEvent("web_app_request_safe_area");
  postEvent("web_app_request_content_safe_area");
  postEvent("web_app_setup_back_button", { is_visible: true });
}

export function ready() {
  postEvent("web_app_ready");
}

export function close() {
  postEvent("web_app_close");
}
