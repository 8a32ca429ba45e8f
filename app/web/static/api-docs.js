// The API docs page (/docs): Swagger UI over this server's OpenAPI schema, from the server's own copy
// of Swagger UI (static/vendor), so that it works without internet and under a CSP with no inline script.
window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  layout: "BaseLayout",
  deepLinking: true,
  showExtensions: true,
  showCommonExtensions: true,
  validatorUrl: null, // Swagger UI would send the schema to validator.swagger.io from any non-local host
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
});
