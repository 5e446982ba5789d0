import express, { type Request, type RequestHandler } from "express";

const malformed = new WeakSet<Request>();

/**
 * JSON body parsing that never answers by itself: a broken body is remembered and reported
 * by the route after authentication, because the upstream checks the token first.
 */
export function tolerantJson(): RequestHandler {
  const parse = express.json();
  return (req, res, next) => {
    parse(req, res, (error?: unknown) => {
      if (error !== undefined && error !== null) {
        malformed.add(req);
        req.body = undefined;
      }
      next();
    });
  };
}

export function hadMalformedBody(req: Request): boolean {
  return malformed.has(req);
}
