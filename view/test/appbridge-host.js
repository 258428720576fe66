// A host page for the browser tests, on the official AppBridge of the pinned
// @modelcontextprotocol/ext-apps: the view in <iframe sandbox="allow-scripts" srcdoc>, spoken to
// through the SDK's PostMessageTransport. tests/appbridge_host.py bundles it (esbuild) with the
// configuration: host info, capabilities and context, the tool input and result it sends once
// the view is initialized, and the results of the server tools it answers (oncalltool, only
// when its capabilities say serverTools). What the view did is kept on window for the test.
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const CONFIG = JSON.parse(document.getElementById("host-config").textContent);
const frame = document.getElementById("app");
window.__appMessages = [];
window.__toolCalls = [];
window.__displayModes = [];
window.__sizes = [];
window.__initialized = false;
window.addEventListener("message", (event) => {
  if (event.source === frame.contentWindow) window.__appMessages.push(event.data);
});

const bridge = new AppBridge(null, CONFIG.hostInfo, CONFIG.hostCapabilities, {
  hostContext: CONFIG.hostContext,
});
if (CONFIG.hostCapabilities.serverTools) {
  bridge.oncalltool = async (params) => {
    window.__toolCalls.push(params.name);
    const result = CONFIG.tools[params.name];
    if (!result) throw new Error(`unknown tool ${params.name}`);
    return result;
  };
}
bridge.onrequestdisplaymode = async ({ mode }) => {
  window.__displayModes.push(mode);
  const offered = CONFIG.hostContext.availableDisplayModes || [];
  const now = offered.includes(mode) ? mode : CONFIG.hostContext.displayMode;
  CONFIG.hostContext.displayMode = now;
  bridge.setHostContext({ ...CONFIG.hostContext, displayMode: now });
  return { mode: now };
};
bridge.onsizechange = (size) => window.__sizes.push(size);
bridge.oninitialized = () => {
  window.__initialized = true;
  bridge.sendToolInput({ arguments: CONFIG.toolArguments });
  bridge.sendToolResult(CONFIG.toolResult);
};
window.__setHostContext = (context) => bridge.setHostContext(context);

bridge
  .connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow))
  .then(() => {
    frame.srcdoc = CONFIG.app;
  });
