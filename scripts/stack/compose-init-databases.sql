-- docker-compose.temporal.yml: the same databases scripts/stack.sh creates.
CREATE DATABASE apipay;
CREATE DATABASE apipay_test;
