// Starts `perfdsl lsp` for .perf files. Highlighting needs none of this (the
// grammar is declarative); diagnostics, hover, completion and go-to-definition
// come from the server, which runs `perfdsl check` on every change.
const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const [command, ...args] = vscode.workspace.getConfiguration("perfdsl").get("command");
  client = new LanguageClient(
    "perfdsl",
    "perfdsl",
    { command, args },
    { documentSelector: [{ language: "perf" }] },
  );
  context.subscriptions.push(client);
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
