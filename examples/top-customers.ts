// Data shaping over a JSON context: total spend per customer, top N.
// ./execache run examples/top-customers.ts --context @examples/orders.json
type Order = { customer: string; amount: number; status: string };

const orders: Order[] = context.orders;
const totals = new Map<string, number>();
for (const order of orders) {
  if (order.status !== "paid") continue;
  totals.set(order.customer, (totals.get(order.customer) ?? 0) + order.amount);
}
return [...totals.entries()]
  .map(([customer, total]) => ({ customer, total: Math.round(total * 100) / 100 }))
  .sort((a, b) => b.total - a.total)
  .slice(0, context.limit ?? 3);
