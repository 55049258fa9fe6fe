declare module 'cluster-key-slot' {
  /** Redis Cluster hash slot (CRC16 of the key or its {hash tag}, mod 16384). */
  function calculateSlot(key: string | Buffer): number;
  namespace calculateSlot {
    /** The common slot of all keys, or -1 when they differ. */
    function generateMulti(keys: Array<string | Buffer>): number;
  }
  export default calculateSlot;
}
