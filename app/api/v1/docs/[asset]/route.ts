import { readFile } from 'node:fs/promises';
import path from 'node:path';

const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
};

const INIT = `window.ui = SwaggerUIBundle({ url: '/api/v1/openapi.json', dom_id: '#swagger-ui', deepLinking: true });`;

// GET: Swagger UI's static files from the swagger-ui-dist package (a fixed allow-list), and its init script.
export async function GET(_req: Request, { params }: { params: Promise<{ asset: string }> }) {
  const { asset } = await params;
  if (asset === 'init.js') return new Response(INIT, { headers: { 'Content-Type': 'text/javascript; charset=utf-8' } });
  const type = ASSETS[asset];
  if (!type) return Response.json({ detail: 'Asset not found' }, { status: 404 });
  const dir = path.join(process.cwd(), 'node_modules', 'swagger-ui-dist');
  const body = await readFile(path.join(dir, asset));
  return new Response(body, { headers: { 'Content-Type': type, 'Cache-Control': 'public, max-age=86400' } });
}
