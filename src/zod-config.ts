// Imported first by each CLI: zod validates without generating code, which a short-lived process never earns back.
//
// zod 4 compiles a parser with `new Function` for each object schema on its first parse; each
// delta process parses a few dozen shapes a handful of times, so the compile costs more than it
// saves. The setting is read when a schema is built, so this module must load before any schema.
import { z } from "zod";

z.config({ jitless: true });
