import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Whether an `Authorization` header carries `Bearer <token>`, for both HTTP servers (the sandbox
 * server and `pleach mcp --http`). Both sides are hashed first, so the comparison takes the same
 * time whatever was sent, and leaks neither the token's content nor its length.
 */
export type BearerTokenCheck = (header: string | undefined) => boolean;

/** A {@link BearerTokenCheck} for `token` (non-empty). */
export function createBearerTokenCheck(token: string): BearerTokenCheck {
  if (token === "") throw new TypeError("a bearer token check needs a non-empty token");
  const expected = digest(token);
  return (header) => {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "");
    return timingSafeEqual(digest(match?.[1] ?? ""), expected) && match !== null;
  };
}

function digest(text: string): Buffer {
  return createHash("sha256").update(text).digest();
}
