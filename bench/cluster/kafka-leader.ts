// Issue 34 (R22): the broker leading the busiest partition of the outbound topic (the most messages by high
// watermark), the drill's Kafka victim: its node name in scripts/cluster.sh (kafka<node id>).
import kafkajs from 'kafkajs';

export async function busiestPartitionLeader(
  brokers: string[],
  topic: string,
): Promise<{ node: string; partition: number; messages: number }> {
  const kafka = new kafkajs.Kafka({
    clientId: 'apipay-cluster-drill',
    brokers,
    logLevel: kafkajs.logLevel.NOTHING,
    retry: { retries: 5 },
  });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const offsets = await admin.fetchTopicOffsets(topic);
    const busiest = offsets.reduce((a, b) => (Number(b.high) - Number(b.low) > Number(a.high) - Number(a.low) ? b : a));
    const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
    const leader = topics[0]!.partitions.find((p) => p.partitionId === busiest.partition)!.leader;
    return { node: `kafka${leader}`, partition: busiest.partition, messages: Number(busiest.high) - Number(busiest.low) };
  } finally {
    await admin.disconnect();
  }
}
