const apiKey = "sk-live-js9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c";
function login(password = "JsHunter2-Secret-Value") { return password; }
