// The quoting lives in @pleach/core (the framework adapters quote too); the tools import it here.
export { shellJoin, shellQuote } from "@pleach/core";
