// The REST reference at /docs: Swagger UI from the package (no CDN, no inline script), reading
// the server's own /openapi.json.
"use strict";
window.addEventListener("DOMContentLoaded", () => {
  window.ui = window.SwaggerUIBundle({
    url: document.body.dataset.openapi, dom_id: "#swagger-ui", layout: "BaseLayout", deepLinking: true,
    showExtensions: true, showCommonExtensions: true, validatorUrl: null,  // no call to an outside validator
    presets: [window.SwaggerUIBundle.presets.apis, window.SwaggerUIBundle.SwaggerUIStandalonePreset],
  });
});
