// `npm run db:embedding-dimension -- <width>`: sets the migrations' vector width in one step,
// before the first `supabase db push`. Deploy with the same `-c embeddingDimension=<width>`:
// synth refuses a width the migrations do not declare.
import { relative } from "node:path";
import { migrationsWidth, setMigrationsWidth } from "./embedding-width";

const width = Number(process.argv[2]);
try {
  const from = migrationsWidth();
  const changed = setMigrationsWidth(width);
  console.log(`vector(${from}) -> vector(${width}) in ${changed.length} migration(s):`);
  for (const file of changed) console.log(`  ${relative(process.cwd(), file)}`);
  console.log(`Now deploy with -c embeddingDimension=${width}.`);
} catch (err) {
  console.error((err as Error).message);
  process.exit(1);
}
