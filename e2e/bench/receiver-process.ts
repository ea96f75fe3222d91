import { startReceiver, type ReceiverCommand, type ReceiverMessage } from './receiver';

/**
 * The benchmarks' receiver in a process of its own (startReceiverProcess, receiver.ts): commands come
 * over IPC, each acknowledged once done and once every arrival recorded before it has been sent.
 */
const send = (m: ReceiverMessage) => process.send!(m);
const cpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};
const receiver = await startReceiver({ downMode: process.env.RECEIVER_DOWN_MODE === '503' ? '503' : 'refuse' });
let sent = 0;
const flush = () => {
  if (receiver.arrivals.length === sent) return;
  send({
    arrivals: receiver.arrivals.slice(sent),
    badSignatures: receiver.badSignatures,
    refused503: receiver.refused503,
    cpuSeconds: cpuSeconds(),
  });
  sent = receiver.arrivals.length;
};
const timer = setInterval(flush, 50);
process.on('message', async (m: ReceiverCommand) => {
  if (m.op === 'addEndpoint') await receiver.addEndpoint(m.key!, m.secret!);
  else if (m.op === 'close') {
    clearInterval(timer);
    await receiver.close();
  } else if (m.op !== 'sync') await receiver[m.op]();
  flush();
  send({ ack: m.id, cpuSeconds: cpuSeconds() });
});
send({ ready: receiver.url });
