const name: string = context.name ?? "world";
console.log(`greeting ${name}`);
return { greeting: `Hello, ${name}!`, length: name.length };
