/** The TCP fault proxy shared by the contract ladder and the checker: {@code dev.baton.faultproxy.FaultProxy}. */
module dev.baton.faultproxy {
    requires org.slf4j;

    exports dev.baton.faultproxy;
}
