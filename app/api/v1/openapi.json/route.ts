import { openApiDocument } from '@/server/http/openapi';

// GET: the OpenAPI 3.1 document, generated from the zod schemas that validate requests.
export function GET() {
  return Response.json(openApiDocument());
}
