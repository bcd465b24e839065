// The body of an async function: `context` holds the --context JSON, `return` gives the result.
const name: string = context.name ?? "world";
console.log(`greeting ${name}`);
return { greeting: `Hello, ${name}!`, length: name.length };
