import { z } from "zod";

/**
 * Output objects are parsed strictly by the server (an unknown key we produced ourselves is a
 * bug) but advertised with additionalProperties: true, so a client holding a cached catalog keeps
 * accepting responses that gained an additive field. Every output object node uses this.
 */
export function outputObject<Shape extends z.ZodRawShape>(shape: Shape) {
  return z.strictObject(shape).meta({ additionalProperties: true });
}
