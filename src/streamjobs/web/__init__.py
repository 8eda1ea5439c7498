"""The web UI: server-rendered pages (Jinja2) and a little hand-written CSS and JavaScript, over
the same services as the REST API. No CDN and no front-end build step."""
