// Renders /openapi.json with Swagger UI (served by this server from the swagger-ui-dist package).
// validatorUrl null: Swagger UI would otherwise ask an online validator about the document.
/* global SwaggerUIBundle */
window.ui = SwaggerUIBundle({
  url: new URL('openapi.json', document.baseURI).href,
  dom_id: '#swagger-ui',
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  validatorUrl: null,
  deepLinking: true,
  defaultModelsExpandDepth: 0,
  docExpansion: 'list',
  tryItOutEnabled: false,
});
