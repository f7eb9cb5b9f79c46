import uWS from 'uWebSockets.js';

/**
 * The uWebSockets.js build ships native binaries for a few Node ABIs only (Node 16, 18 and 20). Elsewhere, or with
 * UWS_USE_FALLBACK set, it loads a JavaScript fallback that throws "Not implemented" for calls every request needs
 * (header enumeration, the client address), so a server would start and then fail on its first request. Returns why
 * the server cannot run here, or undefined when the native build is loaded.
 */
export function nativeServerUnavailable(): string | undefined {
  if (Function.prototype.toString.call(uWS.App).includes('[native code]')) return undefined;
  return (
    `the HTTP server (uWebSockets.js) loaded its JavaScript fallback, which lacks calls svcmaps needs: there is no ` +
    `native build for Node ${process.version} on ${process.platform}-${process.arch} (module ABI ` +
    `${process.versions.modules}), or UWS_USE_FALLBACK is set. Run svcmaps serve on Node 20.`
  );
}
